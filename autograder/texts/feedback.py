"""Texts: the labels of the per-student feedback and of the nbgrader test cell's output."""

TEXTS: dict[str, tuple[str, str]] = {
    "feedback.title": ("Feedback: {student} / {assignment}", "Разбор работы: {student} / {assignment}"),
    "feedback.score": ("autograded {score} / {max}", "автоматическая оценка {score} / {max}"),
    "feedback.manual_pending": ("written answers ({points} points) are graded by your TA",
                                "письменные ответы ({points} б.) оценит ассистент"),
    "feedback.manual_task": ("graded by your TA (/{points})", "оценит ассистент (из {points})"),
    "feedback.checked": ("checked", "проверялось"),
    "feedback.input": ("smallest failing input", "наименьший пример, на котором ошибка"),
    "feedback.expected": ("expected", "ожидалось"),
    "feedback.got": ("got", "получено"),
    "feedback.where": ("where", "подробнее"),
    "feedback.mistake": ("likely mistake", "вероятная ошибка"),
    "feedback.same_for": ("the same for: {titles}", "то же для проверок: {titles}"),
    "feedback.warnings": ("Warnings", "Предупреждения"),
    "feedback.errors": ("Errors", "Ошибки"),
    "feedback.public_note": (
        "Scores come from the hidden checks; the visible checks in your notebook are a subset.",
        "Баллы выставлены скрытыми проверками; видимые проверки в блокноте — лишь их часть."),
    "feedback.pass": ("PASS", "ЗАЧТЕНО"),
    "feedback.fail": ("FAIL", "НЕ ЗАЧТЕНО"),
}
