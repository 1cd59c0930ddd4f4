"""Texts: the catalogue of known mistakes, named to the student when their output matches one.

Ids are ``mistake.<id>``; the check modules compute what each mistake would output
(``MISTAKES`` in checks/softmax.py, attention.py, decoders.py) and name it when it explains
the student's output (checks/diagnosis.py).
"""

TEXTS: dict[str, tuple[str, str]] = {
    "mistake.wrong_axis": (
        'softmax over the wrong axis: it must run over the last axis (keys)',
        "софтмакс вычисляется не по той оси: нужна последняя ось (ключи)"),
    "mistake.mask_value_zero": (
        'masked scores are set to 0 instead of a very negative number, so masked keys still get weight (exp(0) = 1)',
        'замаскированные оценки заменены на 0, а не на очень большое отрицательное число, поэтому замаскированные ключи всё ещё получают вес (exp(0) = 1)'),
    "mistake.fill_not_below_the_scores": (
        'masked scores are filled with a value that real scores can reach (they go down to -1000): where the '
        'valid scores are that low, masked keys get weight; fill with a number below every real score (the book '
        'uses -1e6)',
        "замаскированные оценки заменены значением, которого достигают и настоящие оценки (они опускаются "
        "до -1000): там, где допустимые оценки так же малы, замаскированные ключи получают вес; заполняйте "
        "числом ниже любой настоящей оценки (в книге -1e6)"),
    "mistake.le_instead_of_lt": (
        '`<=` instead of `<`: positions count from 0, so position valid_len itself must be masked',
        "`<=` вместо `<`: позиции нумеруются с 0, поэтому позиция с номером valid_len тоже должна "
        "маскироваться"),
    "mistake.masking_queries": (
        'the mask is applied to the queries (rows) instead of the keys (columns)',
        'маска применена к запросам (строкам), а не к ключам (столбцам)'),
    "mistake.lens_2d_as_1d": (
        '2-D valid_lens are treated as 1-D: with shape (B, Q) every query has its own length',
        'двумерные valid_lens обработаны как одномерные: при форме (B, Q) у каждого запроса своя длина'),
    "mistake.ignores_valid_lens": (
        'valid_lens is ignored: nothing is masked',
        'valid_lens игнорируется: ничего не маскируется'),
    "mistake.float32_inside": (
        'the inputs are float64, but your result is off by float32\'s rounding: something on the way computes in '
        'float32 (a `.float()`, `torch.tensor(d)`, which is int64, so its square root is float32, or a tensor made '
        'without `dtype=`); compute in the input\'s dtype',
        "входы имеют тип float64, но ваш результат отличается на величину ошибки округления float32: "
        "где-то по пути вычисления идут во float32 (`.float()`; `torch.tensor(d)` — это int64, и его "
        "квадратный корень получается во float32; или тензор, созданный без `dtype=`); считайте в типе "
        "входа"),
    "mistake.no_sqrt": (
        'the scores are not divided by √d',
        "оценки не разделены на √d"),
    "mistake.scale_by_d": (
        'the scores are divided by d instead of √d',
        "оценки разделены на d вместо √d"),
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
        "M применяется к запросам, а должна переводить ключи в размерность запроса: qᵀ (M k)"),
    "mistake.first_layer_query": (
        "the query is the first layer's hidden state; it must be the last layer's (hidden_state[-1])",
        'запрос взят из скрытого состояния первого слоя; нужен последний слой (hidden_state[-1])'),
    "mistake.ignores_enc_valid_lens": (
        'enc_valid_lens is ignored, so the decoder attends to padding',
        "enc_valid_lens игнорируется, и декодировщик обращает внимание на токены дополнения"),
    "mistake.context_after_embedding": (
        'the context is concatenated after the embedding; 11.4.2 puts it first: torch.cat((context, x), dim=-1)',
        "контекст присоединён после эмбеддинга; в разделе 11.4.2 он идёт первым: torch.cat((context, x), "
        "dim=-1)"),
    "mistake.cell_state_query": (
        "the query is the LSTM's cell state c; it must be the hidden state h",
        "запрос взят из состояния ячейки LSTM c; нужно скрытое состояние h"),
    "mistake.older_additive_signature": (
        "this is the older book's AdditiveAttention (d2l-en 0.17 and earlier, d2l-zh v2, the 2020 text): its "
        "nn.Linear layers need the key and query sizes, where this notebook's nn.LazyLinear layers find them "
        "on the first call",
        "это AdditiveAttention из старого издания книги (d2l-en 0.17 и раньше, d2l-zh v2, текст 2020 года): "
        "его слоям nn.Linear нужны размерности ключей и запросов, а слои nn.LazyLinear в этом блокноте "
        "узнают их при первом вызове"),
    "mistake.older_additive_call": (
        "AdditiveAttention(num_hiddens, num_hiddens, num_hiddens, dropout) calls the older book's "
        "signature (d2l-en 0.17 and earlier, d2l-zh v2); this notebook's AdditiveAttention takes "
        "(num_hiddens, dropout)",
        "AdditiveAttention(num_hiddens, num_hiddens, num_hiddens, dropout) — вызов по сигнатуре старого "
        "издания книги (d2l-en 0.17 и раньше, d2l-zh v2); AdditiveAttention этого блокнота принимает "
        "(num_hiddens, dropout)"),
    "mistake.older_book_d2l": (
        "this is the older book's code, which calls the d2l package (d2l.sequence_mask, "
        "d2l.AdditiveAttention); the notebook has no d2l: use the names the notebook defines, and build "
        "the mask yourself, e.g. torch.arange(K, device=X.device) < valid_len",
        "это код старого издания книги, который обращается к пакету d2l (d2l.sequence_mask, "
        "d2l.AdditiveAttention); в блокноте d2l нет: используйте имена, определённые в блокноте, а маску "
        "постройте сами, например torch.arange(K, device=X.device) < valid_len"),
    "mistake.lstm_state_for_gru": (
        "the decoder is written for the GRU encoder's state, a single tensor h (it builds (h, h) or "
        "(h, zeros_like(h)) from it): pass the LSTM encoder's (h, c) on as the LSTM's state",
        "декодировщик написан для состояния GRU-кодировщика, одного тензора h (строит из него (h, h) или "
        "(h, zeros_like(h))): передайте в LSTM как состояние пару (h, c) от LSTM-кодировщика"),
    "mistake.init_state_without_lens": (
        "init_state(enc_outputs), without the lengths, is how a decoder without attention starts (chapter "
        "10's, which has nothing to mask); a decoder with attention is called as init_state(enc_outputs, "
        "enc_valid_lens) and returns (outputs, hidden_state, enc_valid_lens), as in 11.4.2",
        "init_state(enc_outputs) без длин — так начинает работу декодировщик без внимания (из главы 10: "
        "ему нечего маскировать); декодировщик с вниманием вызывается как init_state(enc_outputs, "
        "enc_valid_lens) и возвращает (outputs, hidden_state, enc_valid_lens), как в разделе 11.4.2"),
}
