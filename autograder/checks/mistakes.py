"""The catalogue of known mistakes, with how each is named to the student.

Each task's check module computes what a mistake would output (from the reference
with that one mistake applied) and names it when the student's output matches.
"""
from .core import Mistake

CATALOGUE = {m.id: m for m in [
    Mistake("wrong_axis", ("softmax over the wrong axis: it must run over the last axis (keys)",
                           "softmax по неверной оси: он должен идти по последней оси (по ключам)")),
    Mistake("mask_value_zero", ("masked scores are set to 0 instead of a very negative number, so "
                                "masked keys still get weight (exp(0) = 1)",
                                "замаскированные оценки заменены на 0, а не на очень большое отрицательное "
                                "число, поэтому скрытые ключи всё ещё получают вес (exp(0) = 1)")),
    Mistake("le_instead_of_lt", ("`<=` instead of `<`: positions count from 0, so position valid_len "
                                 "itself must be masked",
                                 "`<=` вместо `<`: позиции считаются с 0, поэтому позиция valid_len "
                                 "тоже должна быть скрыта")),
    Mistake("masking_queries", ("the mask is applied to the queries (rows) instead of the keys (columns)",
                                "маска применена к запросам (строкам), а не к ключам (столбцам)")),
    Mistake("lens_2d_as_1d", ("2-D valid_lens are treated as 1-D: with shape (B, Q) every query has "
                              "its own length",
                              "двумерные valid_lens обработаны как одномерные: при форме (B, Q) у "
                              "каждого запроса своя длина")),
    Mistake("ignores_valid_lens", ("valid_lens is ignored: nothing is masked",
                                   "valid_lens игнорируется: ничего не маскируется")),
    Mistake("no_sqrt", ("the scores are not divided by √d", "оценки не поделены на √d")),
    Mistake("scale_by_d", ("the scores are divided by d instead of √d",
                           "оценки поделены на d вместо √d")),
    Mistake("no_tanh", ("tanh is missing: score = w_vᵀ tanh(W_q q + W_k k)",
                        "пропущен tanh: оценка = w_vᵀ tanh(W_q q + W_k k)")),
    Mistake("positive_distance", ("the sign is flipped: the score is minus the squared distance, so "
                                  "nearer keys get more weight",
                                  "знак перепутан: оценка равна минус квадрату расстояния, чтобы "
                                  "ближние ключи получали больший вес")),
    Mistake("distance_not_squared", ("the distance is not squared: the score is −‖q − k‖² / (2√d)",
                                     "расстояние не возведено в квадрат: оценка равна −‖q − k‖² / (2√d)")),
    Mistake("missing_half", ("the factor 1/2 is missing: the score is −‖q − k‖² / (2√d)",
                             "пропущен множитель 1/2: оценка равна −‖q − k‖² / (2√d)")),
    Mistake("M_on_queries", ("M is applied to the queries; it maps the keys to the query size: qᵀ (M k)",
                             "M применена к запросам; она переводит ключи в размер запроса: qᵀ (M k)")),
    Mistake("first_layer_query", ("the query is the first layer's hidden state; it must be the last "
                                  "layer's (hidden_state[-1])",
                                  "запрос взят из скрытого состояния первого слоя; нужен последний "
                                  "слой (hidden_state[-1])")),
    Mistake("ignores_enc_valid_lens", ("enc_valid_lens is ignored, so the decoder attends to padding",
                                       "enc_valid_lens игнорируется, и декодер смотрит на заполнители")),
    Mistake("context_after_embedding", ("the context is concatenated after the embedding; 11.4.2 puts "
                                        "it first: torch.cat((context, x), dim=-1)",
                                        "контекст присоединён после эмбеддинга; в 11.4.2 он идёт "
                                        "первым: torch.cat((context, x), dim=-1)")),
    Mistake("cell_state_query", ("the query is the LSTM's cell state c; it must be the hidden state h",
                                 "запрос взят из состояния ячейки c; нужно скрытое состояние h")),
]}
