"""The older book's forms (d2l-en <= 0.17, d2l-zh v2, the 2020 text), recognised so that the
feedback names the signature or state this notebook expects and says where the student's
version came from (SPEC §3). Such code still loses the task's points: it cannot be called
as the contract says.

Recognised here from the error alone: code that calls ``d2l.sequence_mask`` (or any
``d2l.*``: the notebook has no ``d2l``), a decoder that builds
``AdditiveAttention(num_hiddens, num_hiddens, num_hiddens, dropout)``, and a decoder whose
``init_state(enc_outputs)`` takes no lengths (a decoder without attention's). The signature
``AdditiveAttention(key_size, query_size, num_hiddens, dropout)`` and an LSTM decoder
written for the GRU encoder's state are recognised by trying them (attention.py,
decoders.py).
"""
import re

from ..sandbox.client import StudentError

D2L = re.compile(r"name 'd2l' is not defined|No module named 'd2l'")
TOO_MANY_ARGUMENTS = re.compile(r"positional argument")
INIT_STATE_WITHOUT_LENS = re.compile(r"\binit_state\(\) takes 2 positional arguments but 3 were given")


def mistake_of(error: StudentError) -> str | None:
    """The catalogue id of the older-book form that raised ``error``, if it is one."""
    if error.type_name in ("NameError", "ModuleNotFoundError") and D2L.search(error.message):
        return "older_book_d2l"
    if (error.type_name == "TypeError" and TOO_MANY_ARGUMENTS.search(error.message)
            and error.where and "AdditiveAttention(" in error.where):
        return "older_additive_call"
    if error.type_name == "TypeError" and INIT_STATE_WITHOUT_LENS.search(error.message):
        return "init_state_without_lens"
    return None
