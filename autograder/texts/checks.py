"""Texts: what each check checks, its title, and why it failed (autograder/checks/).

Russian terms follow the course's glossary (texts/terms.py): веса внимания, маскирование,
допустимая длина, запрос, ключ, значение, логиты, скрытое состояние.
"""

# The check names are grader.yml's keys (English, part of the JSON); their titles are what
# the feedback shows as each item's heading.
_TITLES = {
    "output shape, dtype and device": "форма, тип и устройство результата",
    "rows sum to one over valid keys": "сумма весов по допустимым ключам равна 1",
    "zero weight beyond valid length": "нулевые веса за допустимой длиной",
    "matches the reference with 1-D valid_lens": "совпадение с эталоном при одномерных valid_lens",
    "matches the reference with 2-D valid_lens": "совпадение с эталоном при двумерных valid_lens",
    "plain softmax when valid_lens is None": "обычный софтмакс при valid_lens=None",
    "lengths above K mean all valid": "длины больше K: все ключи допустимы",
    "finite row for valid length 0": "конечная строка при допустимой длине 0",
    "runs on any device": "работает на любом устройстве",
    "output and attention_weights shapes": "формы выхода и attention_weights",
    "matches the reference": "совпадение с эталоном",
    "queries and keys of different sizes": "запросы и ключи разной размерности",
    "dropout only in train mode": "dropout только в режиме обучения",
    "state and output shapes": "формы состояния и выхода",
    "attention weights per step, zero beyond enc_valid_lens":
        "веса внимания на каждом шаге, нули за enc_valid_lens",
    "step by step equals teacher forcing": "пошаговое декодирование совпадает с teacher forcing",
    "learns the synthetic corpus": "обучается на синтетическом корпусе",
}

_WHAT = {
    "what.masked_softmax.output shape, dtype and device": (
        "output shape, dtype and device match the input X",
        "форма, тип и устройство результата такие же, как у входа X"),
    "what.masked_softmax.rows sum to one over valid keys": (
        "each row's weights on the valid keys sum to 1",
        "в каждой строке веса допустимых ключей в сумме дают 1"),
    "what.masked_softmax.zero weight beyond valid length": (
        "keys at positions >= valid_len get weight 0",
        "ключи на позициях >= valid_len получают вес 0"),
    "what.masked_softmax.matches the reference with 1-D valid_lens": (
        "weights equal the reference for valid_lens of shape (B,)",
        "веса совпадают с эталоном при valid_lens формы (B,)"),
    "what.masked_softmax.matches the reference with 2-D valid_lens": (
        "weights equal the reference for valid_lens of shape (B, Q)",
        "веса совпадают с эталоном при valid_lens формы (B, Q)"),
    "what.masked_softmax.plain softmax when valid_lens is None": (
        "valid_lens=None gives a plain softmax over the keys",
        "при valid_lens=None получается обычный софтмакс по ключам"),
    "what.masked_softmax.lengths above K mean all valid": (
        "lengths above the number of keys K keep every key",
        "длины больше числа ключей K оставляют все ключи"),
    "what.masked_softmax.finite row for valid length 0": (
        "a row with valid length 0 comes out finite",
        "строка с допустимой длиной 0 остаётся конечной"),
    "what.runs on any device": (
        "works for inputs on any device (no tensor created on the CPU)",
        "работает с входами на любом устройстве (без тензоров, созданных на CPU)"),
    "what.attention.output and attention_weights shapes": (
        "output is (B, Q, v) and attention_weights is (B, Q, K)",
        "выход имеет форму (B, Q, v), attention_weights — форму (B, Q, K)"),
    "what.attention.matches the reference": (
        "output and attention_weights equal the reference (same weights, eval mode)",
        "выход и attention_weights совпадают с эталоном (те же параметры, режим eval)"),
    "what.attention.matches the reference with 2-D valid_lens": (
        "output equals the reference for valid_lens of shape (B, Q)",
        "выход совпадает с эталоном при valid_lens формы (B, Q)"),
    "what.attention.queries and keys of different sizes": (
        "queries and keys of different sizes work and match the reference",
        "запросы и ключи разной размерности работают и совпадают с эталоном"),
    "what.attention.dropout only in train mode": (
        "dropout acts on the weights in train mode only",
        "dropout действует на веса внимания и только в режиме обучения"),
    "what.decoder.state and output shapes": (
        "init_state and forward follow the state contract and the shapes of the assignment",
        "init_state и forward соблюдают контракт состояния и формы из задания"),
    "what.decoder.matches the reference": (
        "logits equal the reference decoder's (same weights, same encoder outputs)",
        "логиты совпадают с эталонным декодером (те же параметры и выходы кодировщика)"),
    "what.decoder.attention weights per step, zero beyond enc_valid_lens": (
        "attention_weights holds one (B, 1, T) tensor per step, zero beyond enc_valid_lens",
        "attention_weights хранит по тензору (B, 1, T) на шаг, с нулями за enc_valid_lens"),
    "what.decoder.step by step equals teacher forcing": (
        "decoding one step at a time with the carried state equals decoding the whole target",
        "пошаговое декодирование с передачей состояния совпадает с декодированием всей цели сразу"),
    "what.decoder.learns the synthetic corpus": (
        "with the reference encoder, the decoder learns the synthetic corpus",
        "с эталонным кодировщиком декодер обучается на синтетическом корпусе"),
}

_PROBLEMS = {
    "check.did_not_finish": ("your code did not finish: {reason}", "ваш код не завершился: {reason}"),
    "check.grader_error": (
        "the grader could not finish this check (a fault of the grader, not of your code); "
        "it is listed for your TA in the class report",
        "проверку не удалось завершить из-за сбоя проверяющей программы (а не вашего кода); "
        "ассистент увидит это в отчёте по группе"),
    "check.where": (" ({where})", " ({where})"),
    "check.raised": ("your code raised {type}: {message}{where}",
                     "ваш код вызвал исключение {type}: {message}{where}"),
    "compare.not_tensor": ("{what}: expected a tensor, got {kind}", "{what}: ожидался тензор, получено {kind}"),
    "compare.wrong_shape": ("{what}: wrong shape", "{what}: неверная форма"),
    "compare.values_differ": ("{what}: values differ", "{what}: значения отличаются"),
    "compare.difference": (
        "largest difference {size} at index {index}: expected {expected}, got {got} (tolerance {tol})",
        "наибольшее расхождение {size} в позиции {index}: ожидалось {expected}, получено {got} "
        "(допуск {tol})"),
    "tensor.attention_weights": ("attention weights", "веса внимания"),
    "tensor.attention_output": ("attention output", "выход внимания"),
    "tensor.stored_weights": ("attention_weights", "attention_weights"),
    "tensor.logits": ("decoder logits", "логиты декодера"),
    "softmax.row_sums": ("weight on the valid keys of each row", "сумма весов по допустимым ключам строки"),
    "softmax.not_weights": (
        "the output is not a set of attention weights: each row with a valid key must be >= 0 and sum to 1",
        "результат не является весами внимания: каждая строка с допустимым ключом должна быть >= 0 "
        "и давать в сумме 1"),
    "softmax.softmax_rows": ("rows of a softmax (each sums to 1)", "строки софтмакса (сумма каждой равна 1)"),
    "softmax.beyond_lens": ("weights beyond valid_lens", "веса за пределами valid_lens"),
    "softmax.not_finite": ("a row with valid length 0 is not finite (NaN or inf)",
                           "строка с допустимой длиной 0 содержит NaN или inf"),
    "softmax.finite_row": ("finite weights (uniform or zeros)", "конечные веса (равномерные или нули)"),
    "softmax.dtype_device": ("the output's dtype or device differs from the input's",
                             "тип или устройство результата отличаются от входа"),
    "softmax.writes_input": (
        "masked_softmax writes into its input X (a reshape is a view, and X[~mask] = value assigns "
        "through it); use masked_fill, which returns a new tensor",
        "masked_softmax записывает во входной X (reshape возвращает представление, и X[~mask] = value "
        "пишет через него); используйте masked_fill: он возвращает новый тензор"),
    "attention.parameters_missing": (
        "parameters {missing} not found: the assignment names them {names}",
        "параметры {missing} не найдены: в задании они называются {names}"),
    "attention.eval_dropout_output": ("eval-mode output with dropout=1", "выход в режиме eval при dropout=1"),
    "attention.train_dropout_output": ("train-mode output with dropout=1", "выход в режиме обучения при dropout=1"),
    "attention.train_weights": ("attention_weights in train mode (before dropout)",
                                "attention_weights в режиме обучения (до dropout)"),
    "attention.dropout_on_output": (
        "in train mode every output is 0 or 2: dropout is applied to the output instead of to the "
        "attention weights",
        "в режиме обучения каждый выход равен 0 или 2: dropout применён к выходу, а не к весам внимания"),
    "decoder.parameters_missing": (
        "parameters {missing} not found: the assignment names the submodules embedding, rnn, dense "
        "and attention",
        "параметры {missing} не найдены: в задании подмодули называются embedding, rnn, dense и attention"),
    "decoder.forward_returns": ("forward must return (logits, state)", "forward должен возвращать (logits, state)"),
    "decoder.init_state_returns": (
        "init_state(enc_outputs, enc_valid_lens) must return (outputs, hidden_state, enc_valid_lens)",
        "init_state(enc_outputs, enc_valid_lens) должен возвращать (outputs, hidden_state, enc_valid_lens)"),
    "decoder.init_state_outputs": ("init_state's outputs", "outputs из init_state"),
    "decoder.lstm_pair": ("the LSTM decoder's hidden state must be the pair (h, c)",
                          "скрытое состояние LSTM-декодера должно быть парой (h, c)"),
    "decoder.new_hidden": ("the new hidden state", "новое скрытое состояние"),
    "decoder.weights_per_step": ("attention_weights must list one tensor per decoding step ({steps})",
                                 "attention_weights должен содержать по тензору на каждый шаг декодирования ({steps})"),
    "decoder.step_weights": ("one step's attention_weights", "attention_weights одного шага"),
    "decoder.beyond_lens": ("weights beyond enc_valid_lens", "веса за пределами enc_valid_lens"),
    "decoder.step_logits": ("logits decoded one step at a time", "логиты при пошаговом декодировании"),
    "devices.undecided": (
        "undecided on the meta device (your code needs real values there); not charged",
        "на устройстве meta проверить не удалось (коду нужны настоящие значения); баллы не сняты"),
    "devices.mixes": (
        "your code mixes devices{where}: a tensor is created on the CPU while the inputs are elsewhere; "
        "pass device=X.device (or use torch.*_like and tensor methods)",
        "ваш код смешивает устройства{where}: тензор создаётся на CPU, а входы лежат на другом "
        "устройстве; передайте device=X.device (или используйте torch.*_like и методы тензора)"),
    "devices.result_on_cpu": (
        "for inputs on another device the result comes back on the CPU: it is built in a tensor "
        "created without device=",
        "для входов на другом устройстве результат оказывается на CPU: он собирается в тензоре, "
        "созданном без device="),
    "devices.wrong_shape": ("wrong output shape on the meta device", "неверная форма результата на устройстве meta"),
    "training.wrong_shape": ("the trained model's output has the wrong shape",
                             "выход обученной модели имеет неверную форму"),
    "training.accuracy": (
        "after {steps} training steps the held-out token accuracy is {accuracy}, below {required}",
        "после {steps} шагов обучения точность по токенам на отложенных предложениях {accuracy}, "
        "ниже {required}"),
    "task.not_defined": ("{name} is not defined: run its cell (grade id {task}) without errors",
                         "{name} не определено: ячейка {task} должна выполняться без ошибок"),
    "task.not_finished": ("not run: the code did not finish", "не выполнялась: код не завершился"),
}

TEXTS: dict[str, tuple[str, str]] = {
    **{f"title.{name}": (name, russian) for name, russian in _TITLES.items()},
    **_WHAT,
    **_PROBLEMS,
}
