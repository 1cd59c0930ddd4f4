"""Texts: the TA's page of written answers (``DIR/answers.html``, autograder/pages/answers.py)
and what the feedback says of a written answer's points once the TA has entered them."""

TEXTS: dict[str, tuple[str, str]] = {
    "answers.title": ("Written answers: {assignment}", "Письменные ответы: {assignment}"),
    "answers.how": (
        "Every student's written answers, one question at a time, as each notebook holds them: Markdown "
        "is formatted, LaTeX is shown as its source, links and images are named with their address and "
        "never opened. Enter the points in `manual_points.csv` in this folder (a row per student and "
        "question is there, its points empty until you fill it), then run `autograder grade` again: the "
        "points reach `grades.csv`, the class report, `autograder show`, `autograder export` and each "
        "student's feedback page.",
        "Письменные ответы всех студентов, по одному вопросу, как они записаны в блокнотах: Markdown "
        "отформатирован, LaTeX показан исходным текстом, ссылки и изображения названы своим адресом и "
        "не открываются. Впишите баллы в `manual_points.csv` в этой папке (там есть строка на каждого "
        "студента и вопрос, баллы пустые, пока их не впишут) и снова запустите `autograder grade`: баллы "
        "попадут в `grades.csv`, сводку по группе, `autograder show`, `autograder export` и на страницу "
        "разбора каждого студента."),
    "answers.contents": ("Questions", "Вопросы"),
    "answers.task_line": ("up to {max} points; points entered for {entered} of {count} students",
                          "максимум баллов — {max}; баллы выставлены {entered} студентам из {count}"),
    "answers.question": ("Question", "Вопрос"),
    "answers.rubric": ("TA rubric (from the source notebook)", "Критерии для ассистента (из исходного блокнота)"),
    "answers.points": ("{points} / {max} entered", "выставлено {points} / {max}"),
    "answers.no_points": ("not entered yet (up to {max})", "ещё не выставлено (максимум баллов — {max})"),
    "answers.csv_id": ("in `manual_points.csv`: {cell}", "в `manual_points.csv`: {cell}"),
    "answers.as_released": (
        "Left as released: the student did not answer (nbgrader would score it 0).",
        "Оставлено как в шаблоне: студент не ответил (nbgrader поставил бы 0)."),
    "answers.no_cell": (
        "No answer cell: the notebook {notebook} has no cell with the grade id {task} (work copied into "
        "a fresh notebook loses nbgrader's metadata). Look for the answer in the notebook itself.",
        "Нет ячейки ответа: в блокноте {notebook} нет ячейки с идентификатором {task} (работа, "
        "перенесённая в новый блокнот, теряет метаданные nbgrader). Поищите ответ в самом блокноте."),
    "answers.not_read": ("The notebook {notebook} could not be read: {reason}",
                         "Блокнот {notebook} не удалось прочитать: {reason}"),
    "answers.not_kept": (
        "This result was graded before answers were kept: run `autograder grade` with `--force` for "
        "this student to see the answer here.",
        "Эта работа проверена до того, как ответы стали сохраняться: запустите `autograder grade` с "
        "`--force` для этого студента, чтобы увидеть ответ здесь."),
    "answers.cut": (
        "The answer is {length} characters long; its first {shown} are shown. The whole answer is in "
        "the notebook {notebook}.",
        "Длина ответа — {length} символов; показаны первые {shown}. Ответ целиком — в блокноте "
        "{notebook}."),
    "answers.show_cut": ("show its first {shown} characters", "показать первые {shown} символов"),
    "answers.no_students": ("No results yet.", "Пока нет ни одной проверенной работы."),
    # The student's feedback, once the TA has entered a written answer's points
    "feedback.manual_entered": ("written answers {points} / {max} (graded by your TA)",
                                "письменные ответы {points} / {max} (оценил ассистент)"),
    "feedback.total": ("total {score} / {max}", "итого {score} / {max}"),
    "page.manual_entered": ("A written answer: your {ta} graded it by hand, {points} of {max} points.",
                            "Письменный ответ: {ta} оценил его вручную, {points} из {max}."),
}
