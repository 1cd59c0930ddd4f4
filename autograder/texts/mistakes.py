"""Texts: the catalogue of known mistakes, named to the student when their output matches one.

Ids are ``mistake.<id>``; the check modules compute what each mistake would output
(``MISTAKES`` in checks/softmax.py, attention.py, decoders.py) and name it when it explains
the student's output (checks/diagnosis.py).
"""

TEXTS: dict[str, tuple[str, str]] = {
    "mistake.wrong_axis": (
        'softmax over the wrong axis: it must run over the last axis (keys)',
        'софтмакс взят не по той оси: он должен идти по последней оси (по ключам)'),
    "mistake.mask_value_zero": (
        'masked scores are set to 0 instead of a very negative number, so masked keys still get weight (exp(0) = 1)',
        'замаскированные оценки заменены на 0, а не на очень большое отрицательное число, поэтому замаскированные ключи всё ещё получают вес (exp(0) = 1)'),
    "mistake.le_instead_of_lt": (
        '`<=` instead of `<`: positions count from 0, so position valid_len itself must be masked',
        '`<=` вместо `<`: позиции считаются с 0, поэтому позиция valid_len тоже должна маскироваться'),
    "mistake.masking_queries": (
        'the mask is applied to the queries (rows) instead of the keys (columns)',
        'маска применена к запросам (строкам), а не к ключам (столбцам)'),
    "mistake.lens_2d_as_1d": (
        '2-D valid_lens are treated as 1-D: with shape (B, Q) every query has its own length',
        'двумерные valid_lens обработаны как одномерные: при форме (B, Q) у каждого запроса своя длина'),
    "mistake.ignores_valid_lens": (
        'valid_lens is ignored: nothing is masked',
        'valid_lens игнорируется: ничего не маскируется'),
    "mistake.no_sqrt": (
        'the scores are not divided by √d',
        'оценки не поделены на √d'),
    "mistake.scale_by_d": (
        'the scores are divided by d instead of √d',
        'оценки поделены на d вместо √d'),
    "mistake.no_tanh": (
        'tanh is missing: score = w_vᵀ tanh(W_q q + W_k k)',
        'пропущен tanh: оценка = w_vᵀ tanh(W_q q + W_k k)'),
    "mistake.positive_distance": (
        'the sign is flipped: the score is minus the squared distance, so nearer keys get more weight',
        'знак перепутан: оценка равна минус квадрату расстояния, чтобы ближние ключи получали больший вес'),
    "mistake.distance_not_squared": (
        'the distance is not squared: the score is −‖q − k‖² / (2√d)',
        'расстояние не возведено в квадрат: оценка равна −‖q − k‖² / (2√d)'),
    "mistake.missing_half": (
        'the factor 1/2 is missing: the score is −‖q − k‖² / (2√d)',
        'пропущен множитель 1/2: оценка равна −‖q − k‖² / (2√d)'),
    "mistake.M_on_queries": (
        'M is applied to the queries; it maps the keys to the query size: qᵀ (M k)',
        'M применена к запросам; она переводит ключи в размер запроса: qᵀ (M k)'),
    "mistake.first_layer_query": (
        "the query is the first layer's hidden state; it must be the last layer's (hidden_state[-1])",
        'запрос взят из скрытого состояния первого слоя; нужен последний слой (hidden_state[-1])'),
    "mistake.ignores_enc_valid_lens": (
        'enc_valid_lens is ignored, so the decoder attends to padding',
        'enc_valid_lens игнорируется, и декодер смотрит на заполнители'),
    "mistake.context_after_embedding": (
        'the context is concatenated after the embedding; 11.4.2 puts it first: torch.cat((context, x), dim=-1)',
        'контекст присоединён после эмбеддинга; в 11.4.2 он идёт первым: torch.cat((context, x), dim=-1)'),
    "mistake.cell_state_query": (
        "the query is the LSTM's cell state c; it must be the hidden state h",
        'запрос взят из состояния ячейки c; нужно скрытое состояние h'),
}
