"""Texts: what the autograded notebook of an nbgrader course shows (autograder/gradebook/).

A student reads them in the feedback that ``nbgrader generate_feedback`` renders from that
notebook; a TA reads them in formgrader.
"""

TEXTS: dict[str, tuple[str, str]] = {
    "gradebook.hidden_tests": (
        "# The hidden checks of this task ran in the autograder's sandbox; their report is below.",
        "# Скрытые проверки этой задачи выполнены в песочнице автопроверки; их отчёт ниже."),
    "gradebook.notes": ("The autograder's notes on the whole notebook:",
                        "Замечания автопроверки ко всему блокноту:"),
    "gradebook.warning": ("warning", "предупреждение"),
    "gradebook.error": ("error", "ошибка"),
}
