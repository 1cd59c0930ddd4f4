"""Texts: what each check checks, its title, and why it failed (autograder/checks/).

Russian terms follow the course's glossary (texts/terms.py): веса внимания, маскирование,
допустимая длина, запрос, ключ, значение, логиты, скрытое состояние.
"""

# The check names are grader.yml's keys (English, part of the JSON); their titles are what
# the feedback shows as each item's heading.
_TITLES = {
    "output shape, dtype and device": "форма, тип и устройство результата",
    "rows sum to one over valid keys": "сумма весов по допустимым ключам равна 1",
    "zero weight beyond valid length": "нулевые веса за пределами допустимой длины",
    "matches the reference with 1-D valid_lens": "совпадение с эталоном при одномерных valid_lens",
    "matches the reference with 2-D valid_lens": "совпадение с эталоном при двумерных valid_lens",
    "plain softmax when valid_lens is None": "обычный софтмакс при valid_lens=None",
    "lengths above K mean all valid": "длины больше K: все ключи допустимы",
    "finite row for valid length 0": "строка без NaN и inf при допустимой длине 0",
    "runs on any device": "работает на любом устройстве",
    "output shape": "форма выхода",
    "matches the reference": "совпадение с эталоном",
    "queries and keys of different sizes": "запросы и ключи разной размерности",
    "attention_weights match the reference": "attention_weights совпадают с эталоном",
    "output equals attention_weights @ values": "выход равен attention_weights @ values",
    "gradients match the reference": "градиенты совпадают с эталоном",
    "deterministic in eval mode": "детерминированность в режиме eval",
    "dropout as nn.Dropout in train mode": "dropout как nn.Dropout в режиме обучения",
    "state and output shapes": "формы состояния и выхода",
    "attention weights per step match the reference": "веса внимания на каждом шаге совпадают с эталоном",
    "step by step equals teacher forcing": "пошаговое декодирование совпадает с декодированием всей "
                                           "последовательности",
    "float64 computed in float64": "вычисления во float64 для входов float64",
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
        "при длинах больше числа ключей K допустимы все ключи"),
    "what.masked_softmax.finite row for valid length 0": (
        "a row with valid length 0 comes out finite",
        "в строке с допустимой длиной 0 нет NaN и inf"),
    "what.masked_softmax.float64 computed in float64": (
        "for float64 scores the weights are as precise as float64 allows (the other checks allow "
        "float32's rounding there: precision is judged here alone), for hundreds of keys and after a "
        "float32 call too",
        "для оценок типа float64 веса вычислены с точностью float64 (остальные проверки допускают там "
        "ошибку округления float32: точность оценивается только здесь), в том числе для сотен ключей и "
        "после вызова во float32"),
    "what.runs on any device": (
        "with its inputs on another device (a GPU), works as on the CPU and gives the same result there "
        "(eval and train mode, with and without lengths)",
        "когда входы на другом устройстве (GPU), код работает так же, как на CPU, и даёт тот же результат "
        "(режимы eval и обучения, с длинами и без)"),
    "what.attention.output shape": (
        "the output is `(B, Q, v)`",
        "выход имеет форму `(B, Q, v)`"),
    "what.attention.matches the reference": (
        "the output equals the reference's (same weights, eval mode, float32 and float64, scores up to "
        "a few hundred)",
        "выход совпадает с эталонным (те же параметры, режим eval, float32 и float64, оценки внимания до "
        "нескольких сотен)"),
    "what.attention.matches the reference with 2-D valid_lens": (
        "the output equals the reference's for valid_lens of shape (B, Q)",
        "выход совпадает с эталонным при valid_lens формы (B, Q)"),
    "what.attention.queries and keys of different sizes": (
        "queries and keys of different sizes work and the output equals the reference's",
        "с запросами и ключами разной размерности код работает, и выход совпадает с эталонным"),
    "what.attention.attention_weights match the reference": (
        "`self.attention_weights` is `(B, Q, K)` and equals the reference's weights",
        "`self.attention_weights` имеет форму `(B, Q, K)` и совпадает с весами внимания эталона"),
    "what.attention.output equals attention_weights @ values": (
        "in eval mode the output equals attention_weights @ values row by row, rows with valid length 0 "
        "included (and finite there)",
        "в режиме eval выход построчно равен attention_weights @ values, в том числе в строках с "
        "допустимой длиной 0 (и в них нет NaN и inf)"),
    "what.attention.gradients match the reference": (
        "the gradients with respect to queries, keys, values and every parameter equal the reference's "
        "(float64); where your output or a gradient differs from the reference's, they agree with your own "
        "output's finite differences instead, so a formula mistake costs the output's points only",
        "градиенты по запросам, ключам, значениям и всем параметрам совпадают с эталонными (float64); там, "
        "где ваш выход или градиент отличается от эталонного, градиенты вместо этого сверяются с конечными "
        "разностями вашего собственного выхода, так что ошибка в формуле снижает баллы только за выход"),
    "what.attention.deterministic in eval mode": (
        "in eval mode, with dropout > 0, the output equals the output without dropout, call after call",
        "в режиме eval при dropout > 0 выход при каждом вызове равен выходу без dropout"),
    "what.attention.dropout as nn.Dropout in train mode": (
        "in train mode each attention weight is zeroed with probability p and the kept ones are scaled "
        "by 1/(1 - p), before the product with the values; attention_weights keeps them before dropout",
        "в режиме обучения, до умножения на значения, каждый вес внимания обнуляется с вероятностью p, а "
        "оставшиеся умножаются на 1/(1 - p); attention_weights хранит веса до dropout"),
    "what.attention.float64 computed in float64": (
        "for float64 inputs the output is as precise as float64 allows (the other checks allow float32's "
        "rounding there: precision is judged here alone), also for a module called in float32 first and "
        "converted with `module.to(torch.float64)`",
        "для входов типа float64 выход вычислен с точностью float64 (остальные проверки допускают там "
        "ошибку округления float32: точность оценивается только здесь), в том числе для модуля, который "
        "сначала вызывали во float32, а потом перевели во float64 через `module.to(torch.float64)`"),
    "what.decoder.float64 computed in float64": (
        "for float64 encoder outputs the logits are as precise as float64 allows (the other checks allow "
        "float32's rounding there: precision is judged here alone), also for a decoder converted with "
        "`module.to(torch.float64)` after a float32 decoding",
        "для выходов кодировщика типа float64 логиты вычислены с точностью float64 (остальные проверки "
        "допускают там ошибку округления float32: точность оценивается только здесь), в том числе для "
        "декодировщика, переведённого во float64 через `module.to(torch.float64)` после декодирования во "
        "float32"),
    "what.decoder.state and output shapes": (
        "init_state and forward follow the state contract and the shapes of the assignment",
        "init_state и forward возвращают состояние и выход в том виде и тех формах, что описаны в задании"),
    "what.decoder.matches the reference": (
        "logits equal the reference decoder's (same weights, same encoder outputs, float32 and float64, "
        "with and without enc_valid_lens)",
        "логиты совпадают с логитами эталонного декодировщика (те же параметры и выходы кодировщика, "
        "float32 и float64, с enc_valid_lens и без)"),
    "what.decoder.attention weights per step match the reference": (
        "attention_weights holds one (B, 1, T) tensor per step, each equal to the reference's weights at "
        "that step, after the whole target ran and when decoding one step per call; in train mode they are "
        "kept before dropout",
        "attention_weights содержит по одному тензору формы (B, 1, T) на каждый шаг, и каждый равен весам "
        "внимания эталона на этом шаге — как после декодирования всей целевой последовательности сразу, "
        "так и при декодировании по одному шагу за вызов; в режиме обучения веса хранятся до dropout"),
    "what.decoder.step by step equals teacher forcing": (
        "decoding one step at a time with the carried state equals decoding the whole target",
        "пошаговое декодирование с передачей состояния совпадает с декодированием всей целевой "
        "последовательности сразу"),
    "what.decoder.gradients match the reference": (
        "the gradients with respect to the encoder's outputs and state and to every parameter of "
        "`embedding`, `rnn`, `dense` and `attention` equal the reference's (float64); where the logits or a "
        "gradient differ from the reference's, they agree with your own logits' finite differences instead",
        "градиенты по выходам и состоянию кодировщика и по всем параметрам `embedding`, `rnn`, `dense` и "
        "`attention` совпадают с эталонными (float64); там, где логиты или градиент отличаются от "
        "эталонных, градиенты вместо этого сверяются с конечными разностями ваших собственных логитов"),
    "what.decoder.deterministic in eval mode": (
        "in eval mode, with dropout > 0, the logits equal the logits without dropout, and decoding again "
        "from the same state gives them again",
        "в режиме eval при dropout > 0 логиты равны логитам без dropout, и повторное декодирование из того "
        "же состояния даёт те же логиты"),
}

_PROBLEMS = {
    "check.did_not_finish": ("your code did not finish: {reason}", "ваш код не завершился: {reason}"),
    "check.grader_error": (
        "the grader could not finish this check (a fault of the grader, not of your code); "
        "it is listed for your TA in the class report",
        "проверку не удалось завершить из-за сбоя проверяющей программы (а не вашего кода); "
        "ассистент увидит это в отчёте по группе"),
    "check.where": (" ({where})", " ({where})"),
    "check.where_line": (" (cell {cell}, line {line}: {code})", " (ячейка {cell}, строка {line}: {code})"),
    "check.parameter_shape": (
        "the reference's weights are copied into your module by name, and your {name} has another shape "
        "than the reference's: check which sizes it maps from and to (W_q maps the query size to num_hiddens, "
        "W_k the key size; a decoder's dense maps num_hiddens to vocab_size)",
        "веса эталона копируются в ваш модуль по именам, а ваш {name} другой формы, чем у эталона: "
        "проверьте, из какой размерности в какую он отображает (W_q — из размерности запросов в "
        "num_hiddens, W_k — из размерности ключей; dense декодировщика — из num_hiddens в vocab_size)"),
    "check.raised": ("your code raised {type}{message}{where}",
                     "ваш код вызвал исключение {type}{message}{where}"),
    "check.message": (": {message}", ": {message}"),
    "check.aside": (" ({message})", " ({message})"),
    "compare.not_tensor": ("{what}: expected a tensor, got {kind}", "{what}: ожидался тензор, а получено: {kind}"),
    "compare.wrong_shape": ("{what}: wrong shape", "{what}: неверная форма"),
    "compare.values_differ": ("{what}: values differ", "{what}: значения отличаются"),
    "compare.difference": (
        "largest difference {size:.3g} at index {index}: expected {expected:.6g}, got {got:.6g} "
        "(tolerance {tol:.1e})",
        "наибольшее расхождение {size:.3g} в позиции {index}: ожидалось {expected:.6g}, получено {got:.6g} "
        "(допуск {tol:.1e})"),
    "tensor.attention_weights": ("attention weights", "веса внимания"),
    "precision.result": ("{what} for float64 inputs, at float64's tolerance",
                         "{what} для входов типа float64, с допуском float64"),
    "tensor.attention_output": ("attention output", "выход внимания"),
    "tensor.stored_weights": ("attention_weights", "attention_weights"),
    "tensor.logits": ("decoder logits", "логиты декодировщика"),
    "softmax.row_sums": ("weight on the valid keys of each row",
                         "сумма весов допустимых ключей в каждой строке"),
    "softmax.beyond_lens": ("weights beyond valid_lens", "веса за пределами valid_lens"),
    "softmax.not_finite": ("a row with valid length 0 is not finite (NaN or inf)",
                           "строка с допустимой длиной 0 содержит NaN или inf"),
    "softmax.finite_row": ("finite weights (uniform or zeros)", "веса без NaN и inf (равномерные или нули)"),
    "softmax.dtype_device": ("the output's dtype or device differs from the input's",
                             "тип или устройство результата не такие, как у входа"),
    "softmax.writes_input": (
        "masked_softmax writes into its input X (a reshape is a view, and X[~mask] = value assigns "
        "through it); use masked_fill, which returns a new tensor",
        "masked_softmax записывает значения в свой вход X (reshape возвращает представление (view) того же "
        "тензора, и X[~mask] = value пишет через него); используйте masked_fill: он возвращает новый тензор"),
    "attention.parameters_missing": (
        "parameters {missing} not found: the notebook's skeleton names them {names}, and the reference's "
        "weights are copied into your module by these names; so this check, which compares with the "
        "reference, cannot run (the checks that do not need the copied weights still judge your code)",
        "параметры {missing} не найдены: в заготовке блокнота они называются {names}, и веса эталона "
        "копируются в ваш модуль по этим именам; поэтому эта проверка, сравнивающая с эталоном, не может "
        "быть выполнена (проверки, которым скопированные веса не нужны, всё равно оценивают ваш код)"),
    "attention.eval_dropout_output": ("eval-mode output with dropout > 0 (expected: your output without dropout)",
                                      "выход в режиме eval при dropout > 0 (ожидался ваш выход без dropout)"),
    "attention.eval_second_call": ("the output of a second call with the same tensors",
                                   "выход второго вызова с теми же тензорами"),
    "attention.writes_input": (
        "your module writes into {name}, a tensor it is given (an in-place operation such as `clamp_`, "
        "`masked_fill_` or `x[...] = ...` on it): the caller's tensor changes, and a decoder passes the "
        "same one at every step; compute into a new tensor (`clamp`, `masked_fill`)",
        "ваш модуль записывает значения в {name} — тензор, который ему передали (операция на месте "
        "(in-place), например `clamp_`, `masked_fill_` или `x[...] = ...`): тензор вызывающего кода "
        "меняется, а декодировщик передаёт один и тот же тензор на каждом шаге; записывайте результат в "
        "новый тензор (`clamp`, `masked_fill`)"),
    "attention.input_unchanged": ("{name} as it was given", "{name} без изменений"),
    "attention.input_written": ("{name} changed by the call", "{name}, изменённый вызовом"),
    "attention.train_weights": ("attention_weights in train mode (before dropout)",
                                "attention_weights в режиме обучения (до dropout)"),
    "context.as_decoder": (
        "{what} of a call as the book's decoder makes it (keys and values are "
        "`enc_outputs.permute(1, 0, 2)`, not contiguous; {keys} keys; queries far from every key), {moment}",
        "{what} при вызове, как в декодировщике книги (ключи и значения — `enc_outputs.permute(1, 0, 2)`, "
        "тензор, не лежащий в памяти непрерывно; число ключей — {keys}; запросы далеко от всех ключей), "
        "{moment}"),
    "context.none_after_lens": (
        "{what} of a call with `valid_lens=None` right after a call with lengths (nothing is masked now), {moment}",
        "{what} при вызове с `valid_lens=None` сразу после вызова с длинами (теперь ничего не маскируется), "
        "{moment}"),
    "context.other_size": (
        "{what} of a call with another feature size d than the calls before (its scale is this call's), {moment}",
        "{what} при вызове с другим числом признаков d, чем в предыдущих вызовах (масштаб должен "
        "соответствовать d этого вызова), {moment}"),
    "context.train_mode": ("{what} of a call in train mode at `dropout=0`, as in training, {moment}",
                           "{what} при вызове в режиме обучения с `dropout=0`, как в цикле обучения, "
                           "{moment}"),
    "context.eval_after_train": (
        "{what} of a call in eval mode right after the train-mode call, on scores near -1000 (nothing learnt "
        "in train mode may change eval mode: a softmax shift kept from training overflows or underflows "
        "here), {moment}",
        "{what} при вызове в режиме eval сразу после вызова в режиме обучения, с оценками около -1000 "
        "(ничто, выученное в режиме обучения, не должно менять режим eval: сдвиг софтмакса, сохранённый "
        "при обучении, здесь приводит к переполнению или исчезновению порядка), {moment}"),
    "context.long_source": ("{what} of the whole target decoded at once over {steps} source steps",
                            "{what} при декодировании всей целевой последовательности сразу (длина "
                            "исходной последовательности — {steps})"),
    "context.predict_step": (
        "{what} as the book's `predict_step` decodes (one step per `forward` call, the returned state "
        "carried; {steps} source steps), {moment}",
        "{what} при декодировании, как в `predict_step` книги (один шаг за вызов `forward`, возвращённое "
        "состояние передаётся дальше; длина исходной последовательности — {steps}), {moment}"),
    "context.other_batch": (
        "logits of another batch's first step as the book's `predict_step` decodes it ({steps} source "
        "steps), its state made by `init_state` before the first batch was decoded and used after it "
        "(nothing of one batch may be kept for the next: not by shape, not by a tensor's identity)",
        "логиты первого шага другого батча при декодировании, как в `predict_step` книги (длина исходной "
        "последовательности — {steps}): его состояние создано `init_state` до декодирования первого батча "
        "и использовано после него (ничего от одного батча не должно переходить к следующему — ни по "
        "форме, ни по тому, какой это объект)"),
    "context.one_step_weights": (
        "after a one-step `forward` call, attention_weights must list exactly one tensor, that step's "
        "(`predict_step` reads it after every call: start a new list in each `forward`), {moment}",
        "после вызова `forward` на один шаг attention_weights должен содержать ровно один тензор — веса "
        "этого шага (`predict_step` читает их после каждого вызова: заводите новый список в каждом "
        "`forward`), {moment}"),
    "context.inputs_overwritten": (
        "{what} of a call on the first call's query, key, value and length tensors with new values written into "
        "them (a training loop reuses its buffers, and a tensor freed and made again gets the address, so "
        "the `id`, of the one before: nothing may be kept by a tensor's identity), {moment}",
        "{what} при вызове с теми же тензорами запросов, ключей, значений и длин, что и в первом вызове, но с "
        "записанными в них новыми значениями (цикл обучения переиспользует буферы, а освобождённый и заново "
        "созданный тензор получает адрес, а значит и `id`, прежнего: нельзя ничего кэшировать в расчёте "
        "на то, что в том же тензоре те же значения), {moment}"),
    "context.first_module": (
        "{what} of a first module, read again after other modules of the class were built and called on "
        "other inputs (two modules share nothing: keep state on `self`, never on the class)",
        "{what} первого модуля при повторном чтении после того, как другие модули того же класса были "
        "созданы и вызваны на других входах (у двух модулей нет ничего общего: храните состояние в "
        "`self`, а не в классе)"),
    "context.first_decoder": (
        "{what} of a first decoder, read again after other decoders of the class decoded other batches "
        "(two decoders share nothing: keep state on `self`, never on the class)",
        "{what} первого декодировщика при повторном чтении после того, как другие декодировщики того же "
        "класса декодировали другие батчи (у двух декодировщиков нет ничего общего: храните состояние в "
        "`self`, а не в классе)"),
    "decoder.weights_list": ("the list attention_weights", "список attention_weights"),
    "context.softmax_call_0": (
        "{what} of the first of three calls in a row (under `torch.no_grad()`, as a decoder's attention makes "
        "them), {moment}",
        "{what} при первом из трёх вызовов подряд (под `torch.no_grad()`, как их делает внимание в "
        "декодировщике), {moment}"),
    "context.softmax_call_1": (
        "{what} of a second call on the first call's X and valid_lens tensors with new values written into "
        "them (a tensor that is freed and made again gets the address, and so the `id`, of the one before: "
        "nothing may be kept by a tensor's identity), {moment}",
        "{what} при втором вызове с теми же тензорами X и valid_lens, что и в первом, но с записанными в "
        "них новыми значениями (освобождённый и заново созданный тензор получает адрес, а значит и `id`, "
        "прежнего: нельзя ничего кэшировать по тому, какой это объект), {moment}"),
    "context.softmax_call_2": (
        "{what} of a third call, on new tensors of the same shape, {moment}",
        "{what} при третьем вызове, с новыми тензорами той же формы, {moment}"),
    "context.dropout_never_acts": (
        "in train mode at `dropout=0.5` the logits are exactly those of eval mode: the attention's dropout "
        "never reaches the context. The context must be `dropout(weights) @ values`, what the attention "
        "module returns, not the weights it keeps before dropout times the values",
        "в режиме обучения с `dropout=0.5` логиты в точности те же, что в режиме eval: dropout внимания не "
        "влияет на контекст. Контекст должен быть равен `dropout(weights) @ values` — тому, что возвращает "
        "модуль внимания, — а не произведению сохранённых до dropout весов на значения"),
    "context.dropout_acts_expected": ("logits that change in train mode (dropout 0.5 on the attention weights)",
                                      "логиты, которые меняются в режиме обучения (dropout 0,5 на весах "
                                      "внимания)"),
    "context.dropout_acts_got": ("the logits of eval mode", "логиты режима eval"),
    "context.now": ("as the call returned it", "сразу после вызова"),
    "context.later": (
        "read again after the later calls (a later call must not change what an earlier one returned: "
        "return a new tensor, not a view of a buffer the next call overwrites)",
        "при повторном чтении после следующих вызовов (следующий вызов не должен менять то, что вернул "
        "предыдущий: возвращайте новый тензор, а не представление буфера, который перезапишет следующий "
        "вызов)"),
    "attention.empty_row_not_finite": (
        "the output of a query with valid length 0 is not finite (NaN or inf)",
        "выход для запроса с допустимой длиной 0 содержит NaN или inf"),
    "attention.law_output": ("output against attention_weights @ values",
                             "выход в сравнении с attention_weights @ values"),
    "attention.older_signature": (
        "{got} is the older book's signature; this notebook's class is called as {expected}",
        "{got} — сигнатура из старого издания книги; в этом блокноте класс вызывается как {expected}"),
    "dropout.not_scaled": (
        "with dropout={p} in train mode, the weights are not either 0 or scaled by 1/(1 - p) as nn.Dropout does",
        "при dropout={p} в режиме обучения веса не равны ни 0, ни исходным весам, умноженным на 1/(1 - p), "
        "как делает nn.Dropout"),
    "dropout.zero_or_scaled": ("each weight 0 or multiplied by {factor:.4g}",
                               "каждый вес равен 0 или умножен на {factor:.4g}"),
    "dropout.rate": (
        "with dropout={p} in train mode, the share of zeroed weights is far from p",
        "при dropout={p} в режиме обучения доля обнулённых весов далека от p"),
    "dropout.same_every_call": (
        "in train mode two calls with the same tensors drop the same weights: the random stream is seeded "
        "again inside the module (`torch.manual_seed` in forward), which also resets the caller's stream; "
        "let nn.Dropout draw",
        "в режиме обучения два вызова с одними и теми же тензорами обнуляют одни и те же веса: генератор "
        "случайных чисел заново инициализируется внутри модуля (`torch.manual_seed` в forward), и заодно "
        "сбрасывается поток случайных чисел вызывающего кода; пусть случайные числа выбирает nn.Dropout"),
    "dropout.drawn_anew": ("other weights dropped at each call", "при каждом вызове обнуляются другие веса"),
    "dropout.same_draw": ("the same weights dropped at both calls", "в обоих вызовах обнулены одни и те же веса"),
    "gradients.none": ("no gradient reaches {name} (is something detached from the graph?)",
                       "градиент не доходит до {name} (что-то отсоединено от графа вычислений?)"),
    "gradients.some": ("a gradient (as in the reference)", "градиент (как у эталона)"),
    "gradients.own_forward": (
        "along a random direction of {name}, (output * R).sum() changes otherwise than your gradients say: "
        "they were checked against your own forward (finite differences in float64), as your output or your "
        "gradients are not the reference's. Something cuts or bends the gradient: .detach(), .data, "
        "torch.no_grad(), a NumPy round trip, .item(), or an in-place write into a tensor autograd still needs",
        "вдоль случайного направления по {name} (output * R).sum() меняется не так, как предсказывают ваши "
        "градиенты: они проверены по вашему собственному прямому проходу (конечные разности в float64), "
        "так как ваш выход или ваши градиенты не совпадают с эталонными. Что-то обрывает или искажает "
        "градиент: .detach(), .data, torch.no_grad(), переход через NumPy, .item() или запись на месте "
        "(in-place) в тензор, который ещё нужен autograd"),
    "gradients.the_parameters": ("the parameters", "параметрам"),
    "gradients.by_differences": ("{value} (finite differences of your own output)",
                                 "{value} (конечные разности вашего собственного выхода)"),
    "gradients.by_autograd": ("{value} (your gradients, by autograd)", "{value} (ваши градиенты, через autograd)"),
    "gradients.missing_parameter": ("parameter {name} not found", "параметр {name} не найден"),
    "attention.dropout_on_output": (
        "in train mode the output is not the dropped weights times the values: dropout is applied to the "
        "output instead of to the attention weights",
        "в режиме обучения выход не равен произведению весов после dropout на значения: dropout применён "
        "к выходу, а не к весам внимания"),
    "decoder.parameters_missing": (
        "parameters {missing} not found: the notebook's skeleton names the submodules `embedding`, `rnn`, "
        "`dense` and `attention`, and the reference's weights are copied into your decoder by these names; "
        "so this check, which compares with the reference, cannot run (the checks that do not need the "
        "copied weights still judge your code)",
        "параметры {missing} не найдены: в заготовке блокнота подмодули называются `embedding`, `rnn`, "
        "`dense` и `attention`, и веса эталона копируются в ваш декодировщик по этим именам; поэтому эта "
        "проверка, сравнивающая с эталоном, не может быть выполнена (проверки, которым скопированные веса "
        "не нужны, всё равно оценивают ваш код)"),
    "decoder.forward_returns": ("forward must return (logits, state)", "forward должен возвращать (logits, state)"),
    "decoder.init_state_returns": (
        "init_state(enc_outputs, enc_valid_lens) must return (outputs, hidden_state, enc_valid_lens)",
        "init_state(enc_outputs, enc_valid_lens) должен возвращать (outputs, hidden_state, enc_valid_lens)"),
    "decoder.init_state_outputs": ("init_state's outputs", "outputs из init_state"),
    "decoder.lstm_pair": ("the LSTM decoder's hidden state must be the pair (h, c)",
                          "скрытое состояние LSTM-декодировщика должно быть парой (h, c)"),
    "decoder.lstm_state": (
        "init_state receives the LSTM encoder's outputs and state; your decoder runs only on the GRU "
        "encoder's",
        "init_state получает выходы и состояние LSTM-кодировщика, а ваш декодировщик работает только с "
        "выходами и состоянием GRU-кодировщика"),
    "decoder.eval_dropout": ("logits in eval mode with dropout > 0 (expected: your logits without dropout)",
                             "логиты в режиме eval при dropout > 0 (ожидались ваши логиты без dropout)"),
    "decoder.second_call": (
        "logits decoded again from the same state (forward must not write into the state it is given, "
        "nor read a state of its own kept on the module between calls)",
        "логиты повторного декодирования из того же состояния (forward не должен ни менять переданное "
        "состояние, ни читать своё, хранимое в модуле между вызовами)"),
    "decoder.writes_state": (
        "your decoder writes into {name}, which it is given (an in-place operation such as `copy_` or "
        "`x[...] = ...` on it): `predict_step` carries the state from call to call and the caller keeps "
        "what it passed; return new tensors",
        "ваш декодировщик записывает значения в {name} — то, что ему передали (операция на месте "
        "(in-place), например `copy_` или `x[...] = ...`): `predict_step` передаёт состояние от вызова к "
        "вызову, а у вызывающего кода остаётся то, что он передал; возвращайте новые тензоры"),
    "decoder.new_hidden": ("the new hidden state", "новое скрытое состояние"),
    "decoder.weights_per_step": ("attention_weights must list one tensor per decoding step ({steps})",
                                 "attention_weights должен содержать по одному тензору на каждый шаг "
                                 "декодирования ({steps})"),
    "decoder.step_weights": ("attention_weights of step {step}", "attention_weights шага {step}"),
    "decoder.train_weights": (
        "row sums of attention_weights of step {step} in train mode at dropout 0.5: the weights are kept "
        "before dropout, so each row sums to one",
        "суммы строк attention_weights шага {step} в режиме обучения при dropout 0,5: веса хранятся до "
        "dropout, поэтому сумма каждой строки равна 1"),
    "decoder.step_logits": ("logits decoded one step at a time", "логиты при пошаговом декодировании"),
    "devices.mixes": (
        "on another device (a GPU) your code mixes devices{where}: a tensor is created on the CPU while "
        "the inputs are elsewhere; pass device=X.device (or use torch.*_like and tensor methods)",
        "на другом устройстве (GPU) ваш код смешивает устройства{where}: тензор создаётся на CPU, а входы "
        "лежат на другом устройстве; передайте device=X.device (или используйте torch.*_like и методы тензора)"),
    "devices.mixes_in_module": (
        "on another device (a GPU) your code mixes devices{where}: a tensor is created on the CPU while "
        "the inputs are elsewhere; pass device=X.device (or use torch.*_like and tensor methods). Or the "
        "module kept a tensor from an earlier call (a cache) on the device of that call: here the same "
        "module ran on the CPU first; a module's result may depend only on its parameters and this call",
        "на другом устройстве (GPU) ваш код смешивает устройства{where}: тензор создаётся на CPU, а входы "
        "лежат на другом устройстве; передайте device=X.device (или используйте torch.*_like и методы "
        "тензора). Или модуль хранит тензор с прошлого вызова (кэш) на устройстве того вызова: здесь тот "
        "же модуль сначала работал на CPU; результат модуля должен зависеть только от его параметров и "
        "входов этого вызова"),
    "devices.result_on_cpu": (
        "for inputs on another device (a GPU) the result comes back on the CPU: it is built in a tensor "
        "created without device=",
        "для входов на другом устройстве (GPU) результат оказывается на CPU: он собирается в тензоре, "
        "созданном без device="),
    "devices.raises_elsewhere": (
        "your code works on the CPU but raises {type} with its inputs on another device (a GPU){message}{where}",
        "ваш код работает на CPU, но вызывает исключение {type}, когда входы на другом устройстве (GPU)"
        "{message}{where}"),
    "devices.differs": (
        "with its inputs on another device (a GPU) your code returns another structure, shape or dtype than "
        "on the CPU",
        "когда входы на другом устройстве (GPU), ваш код возвращает результат другой структуры, формы или "
        "типа, чем на CPU"),
    "devices.runs_nowhere": (
        "your code raises {type} on the CPU for every input of this check{message}, so it runs on no device",
        "ваш код вызывает исключение {type} на CPU для всех входов этой проверки{message}, то есть не "
        "работает ни на одном устройстве"),
    "check.passed_as_own": (
        "passed against what your code's own mistake gives, not against the reference: that mistake is "
        "charged once, by “{main}”",
        "зачтено при сравнении не с эталоном, а с тем, что даёт ваш код с его собственной ошибкой: эта "
        "ошибка учтена один раз, в проверке «{main}»"),
    "check.judged_plain.two_d_lengths": (
        "passed; your code raises on valid_lens of shape (B, Q), which is charged once, by “{check}”: "
        "here those examples were judged with each sentence's first row of lengths, shape (B,)",
        "зачтено; ваш код вызывает исключение на valid_lens формы (B, Q), и это учтено один раз, в "
        "проверке «{check}»: здесь такие примеры проверены с длинами формы (B,) — для каждого предложения "
        "взята первая строка его длин"),
    "check.judged_plain.int32_lengths": (
        "passed; your code raises on int32 lengths, which is charged once, by “{check}”: here those "
        "examples were judged with the same lengths as int64",
        "зачтено; ваш код вызывает исключение на длинах типа int32, и это учтено один раз, в проверке "
        "«{check}»: здесь такие примеры проверены с теми же длинами типа int64"),
    "check.judged_plain.batch_of_one": (
        "passed; your code raises on a batch of one, which is charged once, by “{check}”: here those "
        "examples were judged with their one sentence twice (a batch of two)",
        "зачтено; ваш код вызывает исключение на батче из одного примера, и это учтено один раз, в "
        "проверке «{check}»: здесь такие примеры проверены в батче из двух, с тем же примером дважды"),
    "task.not_defined": ("{name} is not defined: run its cell (grade id {task}) without errors",
                         "имя {name} не определено: выполните без ошибок ячейку, где оно определяется "
                         "(grade id {task})"),
    "task.not_finished": ("not run: the code did not finish", "не выполнялась: код не завершился"),
}

TEXTS: dict[str, tuple[str, str]] = {
    **{f"title.{name}": (name, russian) for name, russian in _TITLES.items()},
    **_WHAT,
    **_PROBLEMS,
}
