"""How a course hands in, as the students' README says it (``autograder release``, SPEC §5): in
nbgrader's Assignments tab on the course's JupyterHub (the exchange, ``autograder serve
--exchange``), or on the service's own page at ``service.url`` in grader.yml when it is set.

The README is Russian first, then English; ``section`` gives each its paragraph, in place of
the markers ``student_readme.md`` holds.
"""
import textwrap

from ..config import ServiceConfig

WIDTH = 100   # as the rest of the README
MARKERS = {"ru": "<!-- how this course hands in: ru -->", "en": "<!-- how this course hands in: en -->"}

EXCHANGE = {
    "ru": "Сдавайте работу в JupyterHub курса, на вкладке Assignments: в строке задания нажмите "
          "Submit. Через несколько секунд там же появится «feedback ready to be fetched»: нажмите "
          "Fetch Feedback, и разбор работы ляжет в папку задания, в `feedback/`. Сдавать можно "
          "сколько угодно раз: в зачёт идёт последняя сдача до срока, а сдача после срока получает "
          "разбор, но оценку не меняет.",
    "en": "Hand in on the course's JupyterHub, in the Assignments tab: press Submit on the "
          "assignment's row. Within seconds the same row says \"feedback ready to be fetched\": press "
          "Fetch Feedback, and your feedback lands in the assignment's folder, under `feedback/`. Hand "
          "in as often as you like: your last hand-in before the deadline counts, and one after it "
          "gets feedback but leaves your grade as it was.",
}
PAGE = {
    "ru": "Сдавайте работу на странице курса {url}: введите токен (его выдал ассистент), выберите "
          "блокнот `.ipynb` и нажмите «Сдать». Разбор работы появится там же через несколько секунд. "
          "Сдавать можно сколько угодно раз: в зачёт идёт последняя сдача до срока.",
    "en": "Hand in on the course's page {url}: give your token (your TA gave it to you), choose the "
          "`.ipynb` notebook and press \"Hand in\". Your feedback appears there within seconds. Hand in "
          "as often as you like: your last hand-in before the deadline counts.",
}


def section(language: str, service: ServiceConfig, assignments: list[str]) -> str:
    """The paragraph for ``language``: the service's page(s) where grader.yml names one, else
    the Assignments tab."""
    if service.url is None:
        said = EXCHANGE[language]
    else:
        pages = [service.url.replace("{assignment}", name) for name in assignments]
        said = PAGE[language].format(url=" ".join(dict.fromkeys(f"<{page}>" for page in pages)))
    return textwrap.fill(said, WIDTH, break_long_words=False, break_on_hyphens=False)


def filled(readme: str, service: ServiceConfig, assignments: list[str]) -> str:
    """``readme`` with each marker replaced by its language's paragraph."""
    for language, marker in MARKERS.items():
        readme = readme.replace(marker, section(language, service, assignments))
    return readme
