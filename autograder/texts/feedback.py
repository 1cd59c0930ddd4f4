"""Texts: the labels of the per-student feedback (its page, its Markdown and the nbgrader test
cell's output: autograder/feedback)."""

TEXTS: dict[str, tuple[str, str]] = {
    "feedback.title": ("Feedback: {student} / {assignment}", "Разбор работы: {student} / {assignment}"),
    "feedback.score": ("autograded {score} / {max}", "автоматическая оценка {score} / {max}"),
    "feedback.manual_pending": ("written answers ({points} points) are graded by your TA",
                                "письменные ответы (максимум баллов — {points}) оценит ассистент"),
    "feedback.checked": ("checked", "проверялось"),
    "feedback.input": ("smallest failing input", "наименьший пример, на котором проверка не пройдена"),
    "feedback.expected": ("expected", "ожидалось"),
    "feedback.got": ("got", "получено"),
    "feedback.where": ("where", "подробнее"),
    "feedback.mistake": ("likely mistake", "вероятная ошибка"),
    "feedback.warnings": ("Warnings", "Предупреждения"),
    "feedback.errors": ("Errors", "Ошибки"),
    "feedback.public_note": (
        "Scores come from the hidden checks; the visible checks in your notebook are a subset.",
        "Баллы выставлены скрытыми проверками; видимые проверки в блокноте — лишь их часть."),
    "feedback.pass": ("PASS", "ЗАЧТЕНО"),
    "feedback.fail": ("FAIL", "НЕ ЗАЧТЕНО"),
    "feedback.not_judged": ("NOT JUDGED", "НЕ ОЦЕНЕНО"),
    "feedback.note_above": ("as noted above", "см. примечание выше"),
    "feedback.blocked_by": (
        "not judged: {check} failed first, and this check cannot tell its own property apart from "
        "that failure",
        "не оценено: до этого не пройдена проверка «{check}», и результат этой проверки нельзя отделить от "
        "той ошибки"),
    # What the student's code gave, where it is not what was expected (checks/compare.py: kind_of):
    # in the course's words, never a type name of the grader's or Python's.
    "kind.none": ("`None` (nothing)", "`None` (ничего)"),
    "kind.tensor": ("a tensor of shape {shape}", "тензор формы {shape}"),
    "kind.list": ("a list of length {count}", "список длины {count}"),
    "kind.tuple": ("a tuple of length {count}", "кортеж длины {count}"),
    "kind.object": ("an object that is not a tensor (a module, or an object of a class of yours)",
                    "объект, который не является тензором (модуль или объект вашего класса)"),
    "kind.value": ("the value {value}", "значение {value}"),
    "kind.method": ("a method, not its value: `@property` is missing above its `def` (or the method is "
                    "not called)",
                    "метод, а не его значение: над его `def` нет `@property` (или метод не вызван)"),
    "kind.other_tensor": ("a tensor whose values cannot be read (not an ordinary dense tensor)",
                          "тензор, значения которого нельзя прочитать (не обычный плотный тензор)"),
    "kind.other": ("an object of type {type}", "объект типа {type}"),
    "kind.typed_tensor": ("a {dtype} tensor of shape {shape}", "тензор {dtype} формы {shape}"),
    "kind.several": ("{items}", "{items}"),
    "kind.per_step": ("a list of length {count}: one `(B, 1, T)` tensor per step",
                      "список длины {count}: по одному тензору формы `(B, 1, T)` на каждый шаг"),
    # A task left as released (grading/task.py: not_attempted): said in one line, instead of its checks.
    "task.not_attempted": (
        "not attempted yet: the template's `raise NotImplementedError()` is still in this cell; replace it "
        "with your solution",
        "задача ещё не решена: в ячейке осталась заглушка из шаблона `raise NotImplementedError()`; замените "
        "её своим решением"),
    "task.not_attempted_line": (
        "not attempted yet: the template's `raise NotImplementedError()` is still in line {line} of this "
        "cell; replace it with your solution",
        "задача ещё не решена: в строке {line} ячейки осталась заглушка из шаблона "
        "`raise NotImplementedError()`; замените её своим решением"),
    "feedback.not_graded": ("No check ran: the notebook could not be graded (see the errors below).",
                            "Проверки не запускались: блокнот не удалось оценить (см. ошибки ниже)."),
}
