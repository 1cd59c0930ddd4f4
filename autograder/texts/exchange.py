"""Texts: deadlines, the wrong assignment's notebook, and hand-ins through nbgrader's exchange
(a student reads them on the service's page, in a refused request's JSON, or as the feedback
page that nbgrader's "Fetch Feedback" brings)."""

TEXTS: dict[str, tuple[str, str]] = {
    # The HTTP API and the students' page
    "service.error.deadline_passed": (
        "your deadline, {deadline}, has passed: the service takes no more submissions of yours",
        "ваш срок сдачи, {deadline}, прошёл: сервис больше не принимает ваши работы"),
    "service.error.wrong_assignment": (
        "this is the {other} notebook, not {assignment}: hand in your {assignment} notebook here",
        "это блокнот задания {other}, а не {assignment}: сдайте сюда блокнот {assignment}"),
    "service.page.deadline": (
        "Deadline: {deadline} (unless your {ta} gave you an extension).",
        "Срок сдачи: {deadline} (если {ta} не продлил его вам)."),
    # A hand-in after the student's deadline: graded, kept in history/, never the result that counts
    "issue.late_handin": (
        "handed in at {handed_in}, after your deadline {deadline}: this feedback is for you, and the result "
        "that counts stays your last hand-in before the deadline",
        "сдано {handed_in}, после вашего срока {deadline}: этот разбор — для вас, а в зачёт идёт ваша "
        "последняя сдача до срока"),
    # The feedback page of a hand-in the service refused (the student's own, with a valid secret)
    "exchange.refused.title": ("Not graded: {assignment}", "Не проверено: {assignment}"),
    "exchange.refused.body": (
        "Your hand-in of {handed_in} was not graded: {reason}. Fix it and submit again.",
        "Ваша сдача от {handed_in} не проверена: {reason}. Исправьте это и сдайте снова."),
    "exchange.reason.no_notebook": ("it holds no {notebook}", "в ней нет {notebook}"),
    "exchange.reason.several": (
        "it holds no {notebook}, and several other notebooks ({names}): submit the assignment's folder with "
        "{notebook} in it",
        "в ней нет {notebook}, зато несколько других блокнотов ({names}): сдайте папку задания с {notebook}"),
    "exchange.reason.not_regular": ("{name} in it is a link or not a plain file",
                                    "{name} в ней — ссылка или не обычный файл"),
    "exchange.reason.too_large": ("{name} is larger than {limit} MB; clear its outputs",
                                  "{name} больше {limit} МБ; очистите вывод ячеек"),
}
