"""Texts: ``autograder serve``, the students' page at ``/`` and the reasons its API gives
(a student reads them on the page, or in the JSON of a refused request)."""

TEXTS: dict[str, tuple[str, str]] = {
    # The students' page
    "service.page.title": ("Hand in: {assignment}", "Сдать работу: {assignment}"),
    "service.page.intro": (
        "Upload your notebook: the hidden checks grade it in a sandbox and you read your "
        "{feedback} here, usually within seconds. Hand in as often as you like (up to {limit} "
        "times an hour); your latest submission counts. Written answers are graded by your {ta} later.",
        "Загрузите блокнот: скрытые проверки оценят его в изолированной среде, и здесь появится "
        "{feedback} — обычно через несколько секунд. Сдавать можно сколько угодно раз (не больше "
        "{limit} в час); учитывается последняя сдача. Письменные ответы позже оценит {ta}."),
    "service.page.token": ("Your token (your {ta} gave it to you)", "Ваш токен (его выдал {ta})"),
    "service.page.notebook": ("Your notebook, {notebook}", "Ваш блокнот, {notebook}"),
    "service.page.send": ("Hand in", "Сдать"),
    "service.page.feedback": ("Your feedback", "Разбор вашей работы"),
    "service.page.submission": ("submission {id}", "сдача {id}"),
    "service.status.sending": ("Uploading…", "Загрузка…"),
    "service.status.queued": ("Waiting in line for a free grader…",
                              "В очереди: ожидание свободного проверяющего процесса…"),
    "service.status.grading": ("Being graded…", "Идёт проверка…"),
    "service.status.done": ("Graded: your feedback is below.", "Проверено: разбор работы ниже."),
    "service.status.replaced": ("Replaced by your newer submission.", "Заменена вашей более новой сдачей."),
    "service.status.unreachable": ("The service did not answer; try again in a minute.",
                                   "Сервис не ответил; попробуйте через минуту."),
    "service.status.choose": ("Give your token and choose your notebook.", "Введите токен и выберите блокнот."),
    # Why a request was refused (the JSON's "reason")
    "service.error.unauthorized": (
        "missing or unknown token: give the token your {ta} gave you (header `Authorization: Bearer TOKEN`)",
        "токен не указан или неизвестен: введите токен, который выдал {ta} "
        "(заголовок `Authorization: Bearer TOKEN`)"),
    "service.error.not_found": ("no such submission of yours", "такой вашей сдачи нет"),
    "service.error.no_route": ("no such address", "такого адреса нет"),
    "service.error.method": ("this address does not take {method} requests", "этот адрес не принимает запросы {method}"),
    "service.error.too_large": ("the upload is larger than {limit} MB; hand in the notebook without its outputs",
                                "загрузка больше {limit} МБ; сдайте блокнот без вывода ячеек"),
    "service.error.rate": (
        "you handed in {limit} times within the last hour, the most allowed; try again in {minutes} min",
        "за последний час вы уже сдавали работу максимально допустимое число раз ({limit}); попробуйте "
        "через {minutes} мин"),
    "service.error.refused_rate": (
        "{limit} of your uploads were refused within the last hour, the most allowed; check that you hand in "
        "the notebook itself, and try again in {minutes} min",
        "за последний час отклонено {limit} ваших загрузок — больше нельзя; проверьте, что сдаёте сам блокнот, "
        "и попробуйте через {minutes} мин"),
    "service.error.uploading": ("your previous upload is still arriving; hand in again when it is done",
                                "ваша предыдущая загрузка ещё не закончилась; сдайте снова, когда она завершится"),
    "service.error.not_multipart": ("send the notebook as multipart/form-data, in a field named `notebook`",
                                    "отправьте блокнот как multipart/form-data, в поле `notebook`"),
    "service.error.malformed": ("the upload is not well-formed multipart/form-data",
                                "загруженные данные — некорректный multipart/form-data"),
    "service.error.no_notebook": ("the upload has no field named `notebook` (or has it twice)",
                                  "в загрузке нет поля `notebook` (или оно повторяется)"),
    "service.error.not_json": ("the file is not a notebook: it is not JSON text in UTF-8",
                               "файл — не блокнот: это не текст JSON в UTF-8"),
    "service.error.not_notebook": ("the file is JSON but not a Jupyter notebook (it has no list of cells)",
                                   "файл в формате JSON, но это не блокнот Jupyter (в нём нет списка ячеек)"),
    "service.error.too_many_values": (
        "the notebook's cells and their nbgrader metadata hold more than {limit} values (a cell needs about "
        "twenty); paste your solutions into a new copy of the released notebook and hand that in",
        "в ячейках блокнота и их метаданных nbgrader больше {limit} значений (ячейке нужно около двадцати); "
        "вставьте свои решения в новую копию выданного блокнота и сдайте её"),
    "service.error.slow_upload": ("the upload took longer than {seconds} s; try again",
                                  "загрузка заняла больше {seconds} с; попробуйте ещё раз"),
    "service.error.not_graded": ("not graded yet: ask again when its status is done",
                                 "ещё не проверено: запросите снова, когда статус станет done"),
    "service.error.replaced": ("never graded: your newer submission replaced it while it waited; read that one's "
                               "feedback",
                               "не проверялась: пока она ждала, её заменила ваша более новая сдача; "
                               "смотрите разбор работы для той сдачи"),
    "service.error.internal": ("the service failed on this request; try again, and tell your TA if it keeps failing",
                               "сервис дал сбой на этом запросе; попробуйте ещё раз, а если сбой повторится, "
                               "сообщите ассистенту"),
}
