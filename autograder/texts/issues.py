"""Texts: warnings and errors about a submission as a whole (its file, its cells, its worker)."""

TEXTS: dict[str, tuple[str, str]] = {
    "issue.missing": ("{path}: no notebook found", "{path}: блокнот не найден"),
    "issue.not_regular": (
        "{path} is a symbolic link or another non-regular file; it was not read (hand in the notebook itself)",
        "{path} — символическая ссылка или другой специальный файл; он не читался (сдайте сам блокнот)"),
    "issue.other_notebook": (
        "graded {name}: your folder has no {expected}, and {name} is the only other notebook in it "
        "that could be this assignment's (hand in {expected} next time)",
        "оценён блокнот {name}: в вашей папке нет {expected}, и {name} — единственный другой блокнот в "
        "ней, который может относиться к этому заданию (в следующий раз сдавайте блокнот под именем "
        "{expected})"),
    "issue.id_from_folder": (
        "graded as student {id}, the name of the folder it is the only notebook in ({file}); if "
        "{id} is not you, tell your TA",
        "оценено как работа студента {id} — по имени папки, в которой этот блокнот единственный ({file}); "
        "если {id} — не вы, сообщите ассистенту"),
    "issue.id_claimed_twice": (
        "graded as {path}, its path: another notebook in the class also has the name {id} (tell your "
        "TA which is yours)",
        "оценено под именем {path} (путь к файлу): у другого блокнота в группе то же имя {id} (сообщите "
        "ассистенту, какой из них ваш)"),
    "issue.several_notebooks": (
        "no {expected} in your folder, and several other notebooks ({names}): none was graded; "
        "hand in your work as {expected}",
        "в вашей папке нет {expected}, но есть несколько других блокнотов ({names}): ни один не оценён; "
        "сдайте работу под именем {expected}"),
    "issue.too_large": ("{name} is larger than {limit} MB; it was not read",
                        "{name} больше {limit} МБ; файл не читался"),
    "issue.too_much_code": (
        "{name}: its code cells and nbgrader metadata alone take more than {limit} MB (outputs and "
        "attachments do not count); it was not graded",
        "{name}: одни только ячейки с кодом и метаданные nbgrader занимают больше {limit} МБ (вывод ячеек "
        "и вложения не учитываются); работа не оценивалась"),
    "issue.too_many_values": (
        "{name}: its cells and their nbgrader metadata hold more than {limit} values (a cell needs about "
        "twenty); it was not graded. Paste your solutions into a new copy of the released notebook, whose "
        "metadata is intact, and hand that in",
        "{name}: в ячейках и их метаданных nbgrader больше {limit} значений (ячейке нужно около двадцати); "
        "работа не оценивалась. Вставьте свои решения в новую копию выданного блокнота, где метаданные "
        "не повреждены, и сдайте её"),
    "issue.not_utf8": ("{name}: not UTF-8 text ({position}); save the notebook again from Jupyter (File → "
                       "Download) and hand it in again",
                       "{name}: файл не является текстом в UTF-8 ({position}); сохраните блокнот заново из "
                       "Jupyter (File → Download) и сдайте его ещё раз"),
    "issue.invalid_notebook": ("{name}: not a valid notebook ({reason}); save the notebook again from "
                               "Jupyter (File → Download) and hand it in again",
                               "{name}: некорректный блокнот ({reason}); сохраните блокнот заново из "
                               "Jupyter (File → Download) и сдайте его ещё раз"),
    "issue.invalid_cells": ("the notebook's cells are malformed ({reason}); save the notebook again from "
                            "Jupyter (File → Download) and hand it in again",
                            "ячейки блокнота повреждены ({reason}); сохраните блокнот заново из Jupyter "
                            "(File → Download) и сдайте его ещё раз"),
    "issue.old_nbformat": ("{name}: nbformat {version}, converted to 4",
                           "{name}: формат nbformat {version}, блокнот преобразован в версию 4"),
    "issue.wrong_assignment": (
        "this is the {other} notebook, not {assignment}: hand in your {assignment} notebook here (your TA "
        "grades the {other} one with that assignment)",
        "это блокнот задания {other}, а не {assignment}: сдайте сюда блокнот {assignment} (блокнот {other} "
        "ассистент оценит в рамках того задания)"),
    "issue.no_nbgrader_metadata": (
        "no cell carries nbgrader's metadata (was the work copied into a new notebook?): the cells "
        "ran in their order and each task was graded by the name it defines; hand in the released "
        "notebook next time",
        "ни у одной ячейки нет метаданных nbgrader (работа скопирована в новый блокнот?): ячейки "
        "выполнены по порядку, а каждая задача оценена по имени, которое она определяет; в следующий "
        "раз сдавайте выданный блокнот"),
    "issue.bad_grade_id": ("cell {cell}: its grade id is not a string; it runs as your own cell",
                           "ячейка {cell}: её grade id — не строка; она выполняется как ваша собственная "
                           "ячейка"),
    "issue.duplicate_cell": ("grade id {gid!r} appears again (cell {cell}); only the first is used",
                             "grade id {gid!r} встречается повторно (ячейка {cell}); используется только "
                             "первая ячейка с ним"),
    "issue.unknown_grade_id": (
        "cell {cell} has grade id {gid!r}, which the assignment does not have; it runs as your own cell",
        "у ячейки {cell} grade id {gid!r}, которого нет в задании; она выполняется как ваша собственная "
        "ячейка"),
    "issue.graded_on_book_base": (
        "{name} is built on another task's class of yours, which loses points in its own task: {name} was "
        "graded on the book's version of that class instead, so that one mistake costs points once",
        "{name} унаследован от вашего класса из другой задачи, а тот теряет баллы в своей задаче: поэтому "
        "{name} проверен с версией этого класса из книги, чтобы за одну ошибку баллы не снимались дважды"),
    "issue.magic_removed": (
        "cell {cell}: IPython's magics (%), shell commands (!) and help (?) do nothing in grading; "
        "the code under %time and %%time runs",
        "ячейка {cell}: магические команды IPython (%), команды оболочки (!) и справка (?) при проверке "
        "ничего не делают; код под %time и %%time выполняется"),
    "issue.points_changed": ("cell {gid!r}: points changed from {old} to {new}; the source's count",
                             "ячейка {gid!r}: баллы изменены с {old} на {new}; учитываются исходные баллы"),
    "issue.cell_type_changed": ("cell {gid!r}: its nbgrader type was changed; the source's is used",
                                "ячейка {gid!r}: её тип в nbgrader изменён; используется исходный"),
    "issue.locked_cell_edited": (
        "cell {gid!r} is read-only and was edited (its checksum does not match); the source's version is used",
        "ячейка {gid!r} только для чтения, но была изменена (контрольная сумма не совпадает); "
        "используется исходная версия"),
    "issue.deleted_solution": ("the solution cell {gid!r} is missing", "ячейка решения {gid!r} отсутствует"),
    "issue.deleted_locked": ("the locked cell {gid!r} was missing; the source's version runs in its place",
                             "отсутствовала ячейка {gid!r} (только для чтения); вместо неё выполнена "
                             "исходная версия"),
    "issue.redefined_later": (
        "{name} is defined again after its solution cell (in cell {cell}); as nbgrader's test right after "
        "the solution cell does, the solution cell's {name} was graded. Keep the answer in that cell",
        "{name} определяется ещё раз после ячейки решения (в ячейке {cell}); как и тест nbgrader, идущий "
        "сразу после ячейки решения, проверка взяла {name} из ячейки решения. Держите ответ в этой ячейке"),
    "issue.cell_error": ("cell {cell} raised {type}{message}", "ячейка {cell} вызвала исключение {type}{message}"),
    "issue.cell_crashed": ("cell {cell}: {reason}; it was skipped and the other cells were run again",
                           "ячейка {cell}: {reason}; она пропущена, остальные ячейки выполнены заново"),
    "issue.worker_lost": ("your code could not be run to the end: {reason}",
                          "ваш код не удалось выполнить до конца: {reason}"),
    "issue.more_issues": ("{count} more of these were not kept", "не сохранены ещё такие сообщения: {count}"),
    "issue.grader_failed": ("the grader itself failed on this submission ({detail}); it will be graded "
                            "again on the next run",
                            "проверяющая программа дала сбой на этой работе ({detail}); работа будет "
                            "проверена заново при следующем запуске"),
    "issue.output_failed": (
        "your feedback pages could not be drawn ({detail}); your scores are recorded, and the TA sees this "
        "error in the class report",
        "страницы с разбором работы не удалось построить ({detail}); баллы записаны, а ассистент увидит эту "
        "ошибку в отчёте по группе"),
    "issue.gradebook_failed": (
        "nbgrader could not record this result in the course's gradebook; the TA sees this error in the "
        "class report",
        "nbgrader не смог записать этот результат в журнал курса; ассистент увидит эту ошибку в отчёте по группе"),
    "lost.closed": ("the worker was closed", "процесс уже закрыт"),
    "lost.lost": ("the process was lost", "процесс потерян"),
    "lost.out_of_memory": ("ran out of memory ({mb} MB)", "не хватило памяти ({mb} МБ)"),
    "lost.cpu_timeout": ("timed out after {seconds} s of CPU time",
                         "превышен лимит процессорного времени ({seconds} с)"),
    "lost.wall_timeout": ("timed out after {wall} s of wall-clock time, with {cpu} s of CPU time",
                          "превышен лимит реального времени ({wall} с; процессорного времени — {cpu} с)"),
    "lost.wall_timeout_overloaded": (
        "timed out after {wall} s of wall-clock time, with {cpu} s of CPU time; the machine was overloaded "
        "(work waited for a CPU {share} of the time), so this is not held against your code's speed",
        "превышен лимит реального времени ({wall} с; процессорного времени — {cpu} с); машина была "
        "перегружена (задачи ждали процессор {share} времени), так что скорость вашего кода тут ни при чём"),
    "lost.submission_time": ("the submission used up its {seconds} s", "работа исчерпала отведённые ей {seconds} с"),
    "lost.reply_too_large": ("it sent a reply larger than {mb} MB", "процесс вернул ответ больше {mb} МБ"),
    "lost.exited": ("the process exited (os._exit or a crash)", "процесс завершился (os._exit или аварийно)"),
    "lost.exit_status": ("the process exited (os._exit or a crash) with status {status}",
                         "процесс завершился (os._exit или аварийно) с кодом {status}"),
    "lost.killed_by": ("the process was killed by {signal} (a crash)", "процесс убит сигналом {signal} (аварийно)"),
    "lost.unreadable_reply": ("it sent an unreadable reply ({detail})",
                              "процесс вернул нечитаемый ответ ({detail})"),
    "lost.too_many_crashes": ("{count} of the cells you added ended the process",
                              "процесс завершили добавленные вами ячейки (их {count})"),
    "lost.own_cells_time": ("the cells you added used up their {seconds} s",
                            "добавленные вами ячейки исчерпали отведённые им {seconds} с"),
    "issue.own_cells_cut": (
        "{reason}: the other {count} cells you added were not run; your solution cells were graded without them",
        "{reason}: остальные добавленные вами ячейки ({count}) не выполнялись; ячейки с решениями "
        "оценены без них"),
    "issue.grader_error": ("the grader failed on a check (not your code's fault): {detail}",
                           "проверяющая программа дала сбой на проверке (не по вине вашего кода): {detail}"),
}
