"""Spatial dynamics per call: mbstate's RNEA, ABA, CRBA and RNEA derivatives against Pinocchio's
Python calls on the same URDF models in the same run (when ``pin`` is installed).

Robots: UR5, Panda and PUMA 560 from configs/mechanisms/urdf, and generated serial chains of n revolute
joints (chain6 … chain48; axes alternating z, y, x, links 0.3 m, off-axis centres of mass) that
show the O(n) growth. Each figure is the least over repeats of the mean over ``calls`` calls,
mbstate's and Pinocchio's timed in turn within each repeat.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from estimator.benchmarks import CONFIGS, machine
from estimator.spatial.dynamics import forward_dynamics, inverse_dynamics, mass_matrix, rnea_derivatives, workspace
from estimator.spatial.model import SpatialModel, load_spatial

ROBOTS = ("ur5", "panda", "puma560", "chain6", "chain12", "chain24", "chain48")
ALGORITHMS = ("rnea", "aba", "crba", "rnea_derivatives")


def chain_urdf(n: int) -> str:
    """A serial chain of n revolute joints as URDF text."""
    links = ['<link name="base"/>']
    joints = []
    for i in range(n):
        axis = ("0 0 1", "0 1 0", "1 0 0")[i % 3]
        links.append(f'<link name="l{i}"><inertial><origin xyz="0.12 0.01 0.02" rpy="0.1 0 0"/><mass value="1.5"/>'
                     '<inertia ixx="0.01" ixy="0.001" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>')
        parent = "base" if i == 0 else f"l{i - 1}"
        joints.append(f'<joint name="j{i}" type="revolute"><parent link="{parent}"/><child link="l{i}"/>'
                      f'<origin xyz="{0.0 if i == 0 else 0.3} 0 0"/><axis xyz="{axis}"/>'
                      '<limit lower="-3" upper="3" effort="100" velocity="5"/></joint>')
    return f'<?xml version="1.0"?><robot name="chain{n}">{"".join(links + joints)}</robot>'


def robot_file(name: str, folder: Path) -> Path:
    if name.startswith("chain"):
        path = folder / f"{name}.urdf"
        path.write_text(chain_urdf(int(name[5:])))
        return path
    return CONFIGS / "urdf" / f"{name}.urdf"


def per_call(calls: int, repeat: int, *cases: Callable[[], object]) -> list[float]:
    """The least over repeats of the mean time of one call [µs] of each case, after a warm-up: the
    cases take turns within each repeat, and the least is the figure other work on a shared machine
    inflates least (it only ever adds time)."""
    for call in cases:
        call()
    samples: list[list[float]] = [[] for _ in cases]
    for _ in range(repeat):
        for call, times in zip(cases, samples):
            start = time.perf_counter()
            for _ in range(calls):
                call()
            times.append((time.perf_counter() - start) / calls)
    return [1e6 * min(times) for times in samples]


def ours(model: SpatialModel, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> dict[str, Callable[[], object]]:
    """The public calls as a user makes them, with a workspace, each returning a fresh array; friction
    off, as Pinocchio's calls have none."""
    work = workspace(model)
    return {"rnea": lambda: inverse_dynamics(model, q, qd, qdd, friction=False, work=work),
            "aba": lambda: forward_dynamics(model, q, qd, qdd, friction=False, work=work),
            "crba": lambda: mass_matrix(model, q, work),
            "rnea_derivatives": lambda: rnea_derivatives(model, q, qd, qdd, friction=False, work=work)}


def pinocchio(path: Path, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> dict[str, Callable[[], object]]:
    """Pinocchio's calls on the same file, or {} without ``pin`` (the chains and arms have only
    revolute joints, so q maps one to one)."""
    try:
        import pinocchio as pin
    except ImportError:
        return {}
    model = pin.buildModelFromUrdf(str(path))
    data = model.createData()
    return {"rnea": lambda: pin.rnea(model, data, q, qd, qdd), "aba": lambda: pin.aba(model, data, q, qd, qdd),
            "crba": lambda: pin.crba(model, data, q),
            "rnea_derivatives": lambda: pin.computeRNEADerivatives(model, data, q, qd, qdd)}


def spatial_benchmarks(repeat: int = 3, calls: int = 2000) -> dict:
    """{"machine": …, robot: {algorithm: {"mbstate_us": …, "pinocchio_us": … or None}}}."""
    out: dict = {"machine": machine()}
    with tempfile.TemporaryDirectory() as folder:
        for name in ROBOTS:
            path = robot_file(name, Path(folder))
            model = load_spatial(path)
            q, qd, qdd = np.random.default_rng(0).uniform(-1, 1, (3, model.dof))
            mine, theirs = ours(model, q, qd, qdd), pinocchio(path, q, qd, qdd)
            out[name] = {}
            for algorithm in ALGORITHMS:
                figures = per_call(calls, repeat, mine[algorithm], *([theirs[algorithm]] if theirs else []))
                out[name][algorithm] = {"mbstate_us": figures[0], "pinocchio_us": figures[1] if theirs else None}
    return out


def spatial_table(results: dict) -> str:
    """The results as text: one line per robot and algorithm, with the ratio."""
    lines = [results["machine"], "", f"{'robot':<9} {'algorithm':<17} {'mbstate µs':>11} {'pin µs':>9} {'ratio':>6}"]
    for robot in ROBOTS:
        for algorithm, figures in results[robot].items():
            ref = figures["pinocchio_us"]
            ratio = f"{figures['mbstate_us'] / ref:6.2f}" if ref else "     —"
            lines.append(f"{robot:<9} {algorithm:<17} {figures['mbstate_us']:11.2f} "
                         f"{ref if ref is not None else float('nan'):9.2f} {ratio}")
    return "\n".join(lines)
