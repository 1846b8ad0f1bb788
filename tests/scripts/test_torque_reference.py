"""scripts/torque_reference.py: its white-jerk discretization, its filter and smoother against the
batch least-squares solution of the same linear model, and its refusals."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import load_script

torque_reference = load_script("torque_reference")


def test_two_half_steps_of_the_white_jerk_process_are_one_step() -> None:
    """The discretization is exact: A(h) = A(h/2)², Q(h) = A(h/2) Q(h/2) A(h/2)ᵀ + Q(h/2)."""
    whole, whole_noise = torque_reference.white_jerk(0.01, 2, 3.0)
    half, half_noise = torque_reference.white_jerk(0.005, 2, 3.0)
    assert np.allclose(whole, half @ half, rtol=1e-14, atol=1e-16)
    assert np.allclose(whole_noise, half @ half_noise @ half.T + half_noise, rtol=1e-12, atol=1e-20)


def test_the_smoother_is_the_batch_least_squares_solution_and_the_filter_its_last_state() -> None:
    """A random linear model of 3 states over 6 steps, 0 to 2 scalar readings a step: the stacked
    whitened residuals (start prior, process, readings) solved by lstsq give every state given every
    reading — the smoother's means — and, at the last step, the filter's."""
    rng = np.random.default_rng(4)
    size, count = 3, 6
    transition = np.eye(size) + 0.1 * rng.standard_normal((size, size))
    root = 0.2 * rng.standard_normal((size, size))
    noise = root @ root.T + 0.01 * np.eye(size)
    start, start_cov = rng.standard_normal(size), np.diag([0.5, 1.0, 2.0])
    steps = [[(rng.standard_normal(size), float(rng.standard_normal()), float(rng.uniform(0.1, 1.0)))
              for _ in range(int(rng.integers(0, 3)))] for _ in range(count)]
    filtered, smoothed = torque_reference.kalman_smoother(transition, noise, start, start_cov, steps)

    def whitened(cov: np.ndarray) -> np.ndarray:
        return np.linalg.inv(np.linalg.cholesky(cov))

    blocks, rhs = [], []
    row = np.zeros((size, size * count))
    row[:, :size] = whitened(start_cov) @ np.eye(size)
    blocks.append(row)
    rhs.append(whitened(start_cov) @ start)
    for k in range(1, count):
        row = np.zeros((size, size * count))
        row[:, size * (k - 1):size * k], row[:, size * k:size * (k + 1)] = -transition, np.eye(size)
        blocks.append(whitened(noise) @ row)
        rhs.append(np.zeros(size))
    for k, observations in enumerate(steps):
        for h, value, variance in observations:
            row = np.zeros((1, size * count))
            row[0, size * k:size * (k + 1)] = h / np.sqrt(variance)
            blocks.append(row)
            rhs.append(np.array([value / np.sqrt(variance)]))
    batch = np.linalg.lstsq(np.vstack(blocks), np.concatenate(rhs), rcond=None)[0].reshape(count, size)
    assert np.allclose(smoothed, batch, atol=1e-10)
    assert np.allclose(filtered[-1], batch[-1], atol=1e-10)


@pytest.mark.parametrize("argv, message", [(["pick_and_place", "c"], "only encoders and gyroscopes"),
                                           (["no_such_mechanism", "a"], "no driven cell"),
                                           (["pendulum", "a"], "no driven cell"),
                                           (["fourbar", "a", "--density", "0"], "--density")])
def test_a_cell_it_cannot_take_is_one_line_and_exit_2(argv: list[str], message: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        torque_reference.main(argv)
    assert raised.value.code == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1
