"""Texts: the labels of the HTML pages (autograder/pages): the student's page and the TA's
class report. Terms come from ``terms.py`` (as parameters where the grammar allows)."""

TEXTS: dict[str, tuple[str, str]] = {
    "page.decimal_mark": (".", ","),
    # The student's page
    "page.student": ("student", "студент"),
    "page.points": ("points", "баллы"),
    "page.manual_short": ("by hand", "вручную"),
    "page.manual": ("A written answer: your {ta} grades it by hand (up to {max} points).",
                    "Письменный ответ: его оценит {ta} вручную (максимум баллов — {max})."),
    "page.same_problem": ("The same problem in each of these checks:",
                          "Одна и та же проблема в каждой из этих проверок:"),
    "page.heatmap.yours": ("your {weights}", "ваши {weights}"),
    "page.heatmap.reference": ("reference {weights}", "эталонные {weights}"),
    "page.heatmap.caption": ("Your attention weights and the reference solution's on the smallest "
                             "failing input above (the first example of its batch). Rows are "
                             "queries, columns are keys; both maps use one colour scale.",
                             "Ваши веса внимания и веса эталонного решения на наименьшем примере "
                             "выше (первый пример батча). Строки — запросы, столбцы — ключи; "
                             "шкала цвета у обеих карт общая."),
    "page.heatmap.same_above": ("The same attention weights as in the heatmaps above.",
                                "Те же веса внимания, что на тепловых картах выше."),
    "page.heatmap.undrawable": (
        "These attention weights cannot be drawn: they are not a matrix of numbers that one colour "
        "scale can show.",
        "Эти веса внимания нельзя нарисовать: это не матрица чисел, которую можно показать одной "
        "шкалой цвета."),
    "page.heatmap.no_mistake": ("No known mistake explains these weights.",
                                "Ни одна из известных ошибок не объясняет эти веса."),
    # The TA's class report
    "page.report.title": ("Class report: {assignment}", "Сводка по группе: {assignment}"),
    "page.report.empty": ("No submissions were graded.", "Ни одна работа не проверена."),
    "page.report.summary": ("Submissions: {count}. Autograded points: mean {mean}, median {median} "
                            "of {max}; full marks: {full}; zero: {zero}.",
                            "Работ: {count}. Баллы автоматической проверки: среднее {mean}, медиана "
                            "{median} из {max}; с полным баллом: {full}; с нулём: {zero}."),
    "page.report.manual_pending": ("Written answers ({tasks}; up to {max} points) are graded by hand "
                                   "and are not counted here.",
                                   "Письменные ответы ({tasks}; максимум баллов — {max}) оцениваются "
                                   "вручную и здесь не учтены."),
    "page.report.distribution": ("Score distribution", "Распределение баллов"),
    "page.report.hist_x": ("autograded score (of {max})", "баллы автоматической проверки (из {max})"),
    "page.report.hist_y": ("students", "число студентов"),
    "page.report.mean": ("mean {mean}", "среднее {mean}"),
    "page.report.tasks": ("Tasks", "Задачи"),
    "page.report.pass_rate_explained": (
        "A pass rate is the share of all {count} submissions that passed a check (for a task: that "
        "got all its points); a submission in which the check did not run counts as not passed.",
        "Доля прошедших — доля всех работ ({count}), прошедших проверку (для задачи — набравших "
        "все её баллы); работа, в которой проверка не выполнялась, считается не прошедшей."),
    "page.report.full_marks": ("full marks", "полный балл"),
    "page.report.mean_score": ("mean score", "средний балл"),
    "page.report.checks": ("Checks", "Проверки"),
    "page.report.mistakes": ("Mistakes the class made", "Ошибки группы"),
    "page.report.mistakes_explained": (
        "Each known mistake that explained a student's failing output, by how many students made "
        "it (a student counts once, however many checks named it).",
        "Известные ошибки, объяснившие неверный результат, по числу студентов, которые их "
        "допустили (студент считается один раз, сколько бы проверок ни назвали ошибку)."),
    "page.report.mistake": ("mistake", "ошибка"),
    "page.report.count": ("count", "число"),
    "page.report.students": ("who", "кто"),
    "page.report.named_in": ("named in", "где названа"),
    "page.report.no_mistakes": ("No known mistake was named.", "Ни одна известная ошибка не встретилась."),
    "page.report.undiagnosed": ("Failed checks that no known mistake explains: {count}.",
                                "Непройденных проверок, которые не объясняет ни одна известная "
                                "ошибка: {count}."),
    "page.report.not_attempted": (
        "Tasks not attempted yet (left as the template has them; no mistake, not counted above): {count}.",
        "Задач, оставленных как в шаблоне (к ним ещё не приступали; это не ошибки, выше они не учтены): "
        "{count}."),
    "page.report.errors": ("Submissions with errors", "Работы с ошибками"),
    "page.report.no_errors": ("No submission had an error.", "Ни в одной работе нет ошибок."),
    "page.report.detail": ("the cell's source and traceback", "код ячейки и трассировка"),
    "page.report.warning": ("warning", "предупреждение"),
    "page.report.who": ("who", "у кого"),
    "page.report.written_entered": (
        "Written answers ({tasks}): points entered for {entered} of {count} submissions (in an nbgrader "
        "course, an answer left as released counts 0), mean {mean} of {max}; the totals of those {entered}, autograded and written: mean {total_mean} of {total_max}.",
        "Письменные ответы ({tasks}): работ с выставленными баллами — {entered} из {count} (в курсе "
        "nbgrader ответ, оставленный как в шаблоне, считается за 0), среднее {mean} из {max}; итоговая "
        "оценка этих работ ({entered}) с автоматической проверкой и письменными ответами: среднее "
        "{total_mean} из {total_max}."),
    "page.report.written": ("written answer", "письменный ответ"),
    "page.report.grade": ("grade", "оценка"),
    "page.report.all_grades": ("every student's grade ({count})", "оценки всех студентов ({count})"),
    "page.report.entered": ("entered {entered} / {count}", "выставлено {entered} / {count}"),
    "page.report.timing": ("Time per student", "Время проверки каждой работы"),
    "page.report.timing_explained": (
        "Wall-clock seconds per submission, slowest first, and what they went to: reading the notebook, "
        "running its cells, the checks. Beside them: how many requests the checks sent to the sandboxed "
        "worker and how long they waited for the answers, and the grading process's peak memory.",
        "Время проверки каждой работы в секундах (реальное время), сначала самые долгие, и на что оно "
        "ушло: чтение блокнота, выполнение его ячеек, проверки. Рядом: сколько запросов проверки отправили "
        "в песочницу и сколько ждали ответов, а также пиковое потребление памяти проверяющим процессом."),
    "page.report.total_s": ("total, s", "всего, с"),
    "page.report.phases_s": ("phases, s", "этапы, с"),
    "page.report.worker": ("worker: requests, s waiting", "песочница: запросов, с ожидания"),
    "page.report.peak_mb": ("peak memory, MB", "пик памяти, МБ"),
    "phase.read": ("reading", "чтение"),
    "phase.cells": ("cells", "ячейки"),
    "phase.checks": ("checks", "проверки"),
    "page.report.similar": ("Similar solutions", "Похожие решения"),
    "page.report.similar_explained": (
        "Pairs of students whose solution cells of a task are alike once the released template's code and "
        "the book's published code are left out; renamed variables, reordered lines and comments do not "
        "hide a pair. Similarity is the share of a cell's own code that the other cell has too (the larger "
        "of the two); pairs from {flag} up are listed, most alike first, with the shared code marked. A flag "
        "to look at, never a penalty: no score changed. The same pairs are in {file}.",
        "Пары студентов, у которых ячейки решения одной задачи похожи, если не считать код выданного "
        "шаблона и опубликованный код книги; переименованные переменные, переставленные строки и "
        "комментарии пару не скрывают. Сходство — доля собственного кода ячейки, которая есть и в другой "
        "(большая из двух); показаны пары со сходством от {flag}, сначала самые похожие, общий код "
        "выделен. Это повод посмотреть, а не штраф: баллы не менялись. Те же пары — в {file}."),
    "page.report.no_similar": ("No two solutions are alike beyond the template's and the book's code.",
                               "Нет похожих решений, кроме кода шаблона и книги."),
    "page.report.not_compared": (
        "Not compared ({count}): no solution cells were kept with their results (a notebook without "
        "nbgrader metadata, or a result graded before cells were kept): {students}.",
        "Не сравнивались ({count}): вместе с их результатами не сохранены ячейки решений (блокнот без "
        "метаданных nbgrader или результат, полученный до того, как ячейки стали сохраняться): {students}."),
    "page.report.similarity": ("similarity", "сходство"),
    "page.report.pair": ("pair", "пара"),
    "page.report.same_cell": ("the same cell, {count} students", "одна и та же ячейка, студентов: {count}"),
    "page.report.more_pairs": ("{count} more pairs of {task}", "ещё пары задачи {task}: {count}"),
    "page.report.unexplained": ("Shared unknown mistakes", "Общие неизвестные ошибки"),
    "page.report.unexplained_explained": (
        "Failed checks that no known mistake explains, grouped by behaviour: the same check failing with "
        "the same output on the same example. Largest group first, numbered within each task and check; "
        "a group you recognise is a candidate for the catalogue of mistakes. Tasks left as the template "
        "has them are not counted. The same groups are in {file}.",
        "Непройденные проверки, которые не объясняет ни одна известная ошибка, сгруппированные по "
        "поведению: одна и та же проверка, один и тот же результат на одном и том же примере. Сначала "
        "самые большие группы, номера — внутри задачи и проверки; знакомая группа — кандидат в каталог "
        "ошибок. Задачи, оставленные как в шаблоне, не учитываются. Те же группы — в {file}."),
    "page.report.no_unexplained": ("No failed check is left unexplained.",
                                   "Необъяснённых непройденных проверок нет."),
    "page.report.group": ("group {number}", "группа {number}"),
    "page.report.group_size": ("students: {count}", "студентов: {count}"),
    "page.report.single_groups": ("{count} more failures, each seen in one student", "ещё ошибки, каждая у одного студента: {count}"),
    "page.report.slowest": ("Slowest checks", "Самые долгие проверки"),
    "page.report.mean_s": ("mean, s", "среднее, с"),
    "page.report.slowest_for": ("max, s (who)", "максимум, с (у кого)"),
    "page.report.more_students": ("the other {count} submissions", "остальные работы ({count})"),
}
