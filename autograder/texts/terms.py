"""Texts: the course's terms, as the Russian edition of D2L (chapters 11.3-11.4) names them.

One glossary, so every page, message and label says the same thing the same way: a label
that names a term takes it from here as a parameter (``text("term.attention_weights")``);
where Russian grammar needs another case, the label inflects this same word. Forms to avoid
(and why) are listed in tests/pages/test_texts.py.
"""

TEXTS: dict[str, tuple[str, str]] = {
    # Attention scoring functions, chapter 11.3
    "term.attention_weights": ("attention weights", "веса внимания"),
    "term.attention_scoring_function": ("attention scoring function", "функция оценки внимания"),
    "term.attention_score": ("attention score", "оценка внимания"),
    "term.attention_pooling": ("attention pooling", "агрегирование по вниманию"),
    "term.masking": ("masking", "маскирование"),
    "term.masked_softmax": ("masked softmax", "маскированная операция софтмакс"),
    "term.masked_keys": ("masked keys", "замаскированные ключи"),
    "term.valid_length": ("valid length", "допустимая длина"),
    "term.valid_lens": ("valid lengths", "допустимые длины"),
    "term.softmax": ("softmax", "софтмакс"),
    "term.queries": ("queries", "запросы"),
    "term.keys": ("keys", "ключи"),
    "term.values": ("values", "значения"),
    "term.dot_product": ("dot product", "скалярное произведение"),
    "term.scaled_dot_product_attention": ("scaled dot-product attention",
                                          "внимание с масштабированным скалярным произведением"),
    "term.additive_attention": ("additive attention", "аддитивное внимание"),
    "term.dropout": ("dropout", "dropout"),  # the Russian edition keeps the English word
    "term.batch": ("batch", "батч"),
    "term.heatmap": ("heatmap", "тепловая карта"),
    # Bahdanau attention (11.4)
    "term.encoder": ("encoder", "кодировщик"),
    "term.decoder": ("decoder", "декодировщик"),
    "term.hidden_state": ("hidden state", "скрытое состояние"),
    "term.context_variable": ("context variable", "переменная контекста"),
    "term.embedding": ("embedding", "эмбеддинг"),
    "term.decoding_step": ("decoding step", "шаг декодирования"),
    "term.logits": ("logits", "логиты"),
    # Grading
    "term.feedback": ("feedback", "разбор работы"),
    "term.assignment": ("assignment", "задание"),
    "term.ta": ("TA", "ассистент"),  # the notebooks say the assistant grades written answers
    "term.task": ("task", "задача"),
    "term.check": ("check", "проверка"),
    "term.reference_solution": ("reference solution", "эталонное решение"),
    "term.pass_rate": ("pass rate", "доля прошедших"),
}
