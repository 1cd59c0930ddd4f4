"""The reference gives the CPU's numbers on CUDA (TF32 off), as grading on either must (SPEC §3)."""
import pytest
import torch
from torch.testing import assert_close

from reference import DotProductAttention, masked_softmax

from .builders import DECODERS, build_seq2seq

pytestmark = pytest.mark.cuda


@pytest.fixture(autouse=True)
def no_tf32():
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


@pytest.mark.parametrize("valid_lens", [None, torch.tensor([1, 3]), torch.tensor([[0, 1, 5]] * 2)],
                         ids=["none", "1-D", "2-D"])
def test_attention_on_cuda_matches_cpu(valid_lens):
    """Do masked_softmax and DotProductAttention give the CPU's output on CUDA?"""
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 6)  # (B, Q/K, D/v)
    on_cuda = [t if t is None else t.cuda() for t in (q, k, v, valid_lens)]
    X = q @ k.transpose(1, 2)  # (B, Q, K)
    assert_close(masked_softmax(X.cuda(), on_cuda[3]).cpu(), masked_softmax(X, valid_lens))
    out = DotProductAttention(0.0)(*on_cuda)
    assert out.device.type == "cuda"
    assert_close(out.cpu(), DotProductAttention(0.0)(q, k, v, valid_lens))


@pytest.mark.parametrize("name", DECODERS)
def test_decoder_on_cuda_matches_cpu(name):
    """Does each decoder give the CPU's logits on CUDA (float64)?"""
    encoder, decoder = build_seq2seq(name, num_layers=2)
    src, tgt, lens = torch.randint(0, 11, (3, 5)), torch.randint(0, 11, (3, 4)), torch.tensor([5, 2, 1])
    cpu_logits, _ = decoder(tgt, decoder.init_state(encoder(src, lens), lens))
    encoder, decoder = encoder.cuda(), decoder.cuda()
    src, tgt, lens = src.cuda(), tgt.cuda(), lens.cuda()
    logits, _ = decoder(tgt, decoder.init_state(encoder(src, lens), lens))
    assert_close(logits.cpu(), cpu_logits)
