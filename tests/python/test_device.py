# Devices: ts.cpu(), ts.cuda(i), ts.device("...") and their use by arrays.
import pytest

import tessel as ts


def test_constructors_and_strings():
    assert str(ts.cpu()) == "cpu:0" and ts.cpu().type == "cpu" and ts.cpu().id == 0
    assert str(ts.cuda(1)) == "cuda:1" and ts.cuda(1).type == "cuda"
    assert ts.device("cuda:1") == ts.cuda(1) and ts.device("cpu") == ts.cpu()
    assert ts.device("gpu") == ts.cuda(0) and ts.device("llvm") == ts.cpu()
    assert hash(ts.device("cuda:1")) == hash(ts.cuda(1))
    assert ts.cpu() != ts.cuda(0) and ts.cpu() != "cpu"
    assert repr(ts.cuda(2)) == 'ts.device("cuda:2")'


@pytest.mark.parametrize("bad", ["tpu", "cuda:x", "cuda:-1", "cuda:1x", ""])
def test_bad_device_strings(bad):
    with pytest.raises(ValueError):
        ts.device(bad)


def test_arrays_take_devices():
    a = ts.nd.empty((2,), device=ts.cpu())
    assert a.device == ts.cpu()
    with pytest.raises(TypeError):
        ts.nd.empty((2,), device=3)
