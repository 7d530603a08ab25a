"""The L2 clock a built-in L2 roof is scaled by (`gpus.roofs._clock`): the launch's own, else
one clock for the whole device (its other launches' median, the product's built-in L2 clock, else
the SM clock), each said in the roof's source."""

from __future__ import annotations

import math

import numpy as np

from ncu_roof.gpus.lookup import match_gpu
from ncu_roof.gpus.roofs import _clock
from ncu_roof.gpus.specs import Hardware

NAN = math.nan


def _hardware(key: str) -> Hardware:
    gpu = match_gpu(key)
    assert gpu is not None
    return gpu.hardware()


def test_a_launch_without_an_l2_clock_takes_the_median_of_its_devices_others() -> None:
    # launches 0-2 measured 1.70, 1.68 and 1.71 GHz: launch 3 takes their median, 1.70 GHz, not
    # its SM clock (1.98 GHz) nor a built-in figure
    measured = np.array([1.70e9, 1.68e9, 1.71e9, NAN])
    columns = {"sm_clock_hz": np.array([1.98e9] * 4), "l2_clock_hz": measured}
    clock, at_boost, said = _clock(columns, "l2", _hardware("h200"))
    assert clock.tolist() == [1.70e9, 1.68e9, 1.71e9, 1.70e9]
    assert not at_boost.any()
    assert said.tolist() == [
        None,
        None,
        None,
        "at the device's median L2 clock 1.70 GHz: this launch has none",
    ]


def test_a_device_without_l2_clocks_takes_the_products_built_in_one() -> None:
    # H200: 1.709 GHz (fixtures/h200), whatever the SM ran at
    columns = {"sm_clock_hz": np.array([1.47e9, 1.98e9]), "l2_clock_hz": np.full(2, NAN)}
    clock, at_boost, said = _clock(columns, "l2", _hardware("h200"))
    assert clock.tolist() == [1.709e9, 1.709e9] and at_boost.all()
    assert all(s.startswith("at the built-in L2 clock 1.709 GHz (lts__cycles_elapsed") for s in said.tolist())


def test_a_product_without_a_built_in_l2_clock_takes_the_sm_clock_and_says_so() -> None:
    # A100 SXM4: no L2 clock in the table; the SM clock measured (1.41 GHz), else its boost (1.41 GHz)
    hardware = _hardware("a100-sxm4")
    assert hardware.l2_clock_hz is None and hardware.boost_clock_hz == 1.41e9
    columns = {"sm_clock_hz": np.array([1.09e9, NAN]), "l2_clock_hz": np.full(2, NAN)}
    clock, at_boost, said = _clock(columns, "l2", hardware)
    assert clock.tolist() == [1.09e9, 1.41e9] and at_boost.tolist() == [False, True]
    assert set(said.tolist()) == {"at the SM clock: the report has no L2 clock"}


def test_launches_with_their_own_l2_clock_keep_it() -> None:
    measured = np.array([1.094e9, 1.0937e9])
    columns = {"sm_clock_hz": np.array([1.1e9, 1.1e9]), "l2_clock_hz": measured}
    clock, at_boost, said = _clock(columns, "l2", _hardware("h200"))
    assert clock.tolist() == measured.tolist() and not at_boost.any() and said.tolist() == [None, None]
