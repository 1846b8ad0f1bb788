"""``mbstate bench spatial``'s pieces: the generated chains load with their joint count, and the
result object has the issue's shape (robot -> algorithm -> mbstate_us, pinocchio_us)."""

import json

from estimator.benchmarks.spatial import ALGORITHMS, ROBOTS, chain_urdf, spatial_benchmarks, spatial_table
from estimator.spatial.dynamics import inverse_dynamics
from estimator.spatial.model import load_spatial


def test_generated_chain_loads_with_n_revolute_joints(tmp_path) -> None:
    path = tmp_path / "chain5.urdf"
    path.write_text(chain_urdf(5))
    model = load_spatial(path)
    assert model.dof == 5 and set(model.joint_types) == {"revolute"} and list(model.parent) == [-1, 0, 1, 2, 3]
    assert model.total_mass == 7.5
    assert inverse_dynamics(model, *([[0.1] * 5] * 3)).shape == (5,)


def test_results_have_every_robot_and_algorithm() -> None:
    results = spatial_benchmarks(repeat=1, calls=1)
    json.dumps(results)
    assert set(results) == {"machine", *ROBOTS}
    for robot in ROBOTS:
        assert set(results[robot]) == set(ALGORITHMS)
        for figures in results[robot].values():
            assert figures["mbstate_us"] > 0 and figures["pinocchio_us"] > 0  # pin is in the test extra
    assert len(spatial_table(results).splitlines()) == 3 + len(ROBOTS) * len(ALGORITHMS)
