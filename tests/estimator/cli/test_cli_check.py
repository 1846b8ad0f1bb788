"""``mbstate check``: the report of a good file, and one clear line with exit code 2 for every kind
of bad file (naming the file, the entry and the problem), never a traceback."""

import json
import subprocess
import sys

import pytest
from conftest import MECHANISMS, REPO

from estimator.cli import main

BODY = "{points: [0, 1], mass: 1, I0: 1, cog: [0, 0]}"
PENDULUM = f"points: [{{x: 0, y: 0, fixed: true}}, {{x: 1, y: 0}}]\nplanar_bodies: [{BODY}]\n"


def run_check(capsys, *args) -> tuple[int, str, str]:
    code = main(["check", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_report_of_the_crank_fourbar(capsys) -> None:
    code, out, err = run_check(capsys, MECHANISMS / "fourbar_crank.yaml")
    assert (code, err) == (0, "")
    for line in ["coordinates (n = 5), assembled:", "constraints (m = 4), residual at the assembled q:",
                 "rank of the constraint Jacobian: 4 (0 redundant rows)", "degrees of freedom: 1",
                 "suggested independent coordinates: theta0", "actuators: motor on theta0",
                 "gravity: (0, -9.81) m/s²", "energy at rest: kinetic 0 J, potential 58.86 J"]:
        assert line in out.splitlines()
    assert "rocker: points [2, 3], mass 4 kg, I0 17.3333 kg·m²" in out


def test_json_report_of_the_redundant_robot(capsys) -> None:
    code, out, _ = run_check(capsys, MECHANISMS / "pick_and_place.yaml", "--json")
    info = json.loads(out)
    assert code == 0
    assert (info["n"], info["m"], info["rank"], info["redundant"], info["degrees_of_freedom"]) == (22, 21, 20, 1, 2)
    assert info["independent_coordinates"] == ["theta0", "theta1"]  # the actuated ones are a valid choice
    assert [c["name"] for c in info["coordinates"]][-2:] == ["theta0", "theta1"]
    assert max(abs(c["residual"]) for c in info["constraints"]) < 1e-12
    assert [a["name"] for a in info["actuators"]] == ["motor1", "motor2"]
    assert sum(b["mass"] for b in info["bodies"]) == pytest.approx(24.0)


def test_json_report_lists_force_elements(capsys, write_yaml) -> None:
    path = write_yaml(PENDULUM + """relative_coordinates: [{type: RelativeAngleAbsoluteDOF, points: [0, 1]}]
forces:
  - {type: spring, points: [0, 1], k: 10}
  - {type: damper, points: [0, 1], c: 1}
  - {type: torsional_spring, coordinate: theta0, k: 1}
  - {type: coordinate_force, coordinate: theta0, value: 2}
""")
    info = json.loads(run_check(capsys, path, "--json")[1])
    assert info["forces"] == {"springs_and_dampers": 2, "torsional_springs": 1, "body_torques": 0,
                              "constant_loads_on": ["theta0"]}


@pytest.mark.parametrize(("text", "entry", "problem"), [
    ("points: [{x: 0\n", "", "invalid YAML at line 2, column 1"),
    ("color: red\n" + PENDULUM, "", "unknown key 'color'"),
    ("points: [{x: 0, y: 0, z: 1}]\n", "points[0]", "unknown key 'z'"),
    (PENDULUM.replace("cog: [0, 0]", "cog: [0, 0], colour: red"), "planar_bodies[0]", "unknown key 'colour'"),
    (PENDULUM.replace("I0: 1", "I0: (1/3*mass"), "planar_bodies[0].I0", "bad expression '(1/3*mass'"),
    (PENDULUM.replace("I0: 1", "I0: 2*x7"), "planar_bodies[0].I0", "undefined variable 'x7' in '2*x7'"),
    (PENDULUM.replace("points: [0, 1]", "points: [1]"), "planar_bodies[0].points",
     "a body needs 2 or more points, got 1"),
    (PENDULUM.replace("points: [0, 1]", "points: [0, 4]"), "planar_bodies[0].points",
     "point index 4 out of range (0..1)"),
    (PENDULUM + "relative_coordinates: [{type: Hinge, points: [0, 1]}]\n", "relative_coordinates[0].type",
     "unknown type 'Hinge'"),
    (PENDULUM + "constraints: [{type: weld}]\n", "constraints[0].type", "unknown type 'weld'"),
    (PENDULUM + "forces: [{type: magnet}]\n", "forces[0].type", "unknown type 'magnet'"),
    (PENDULUM + "actuators: [{name: motor, coordinate: theta0}]\n", "actuators[0].coordinate",
     "unknown coordinate 'theta0' (known: x1, y1)"),
    (PENDULUM + "forces: [{type: torsional_spring, coordinate: phi, k: 1}]\n", "forces[0].coordinate",
     "unknown coordinate 'phi'"),
    (PENDULUM + "relative_coordinates: [{type: RelativeAngleAbsoluteDOF, points: [0, 1], name: y1}]\n",
     "relative_coordinates[0].name", "duplicate coordinate name 'y1' (also points[1])"),
    ("points: [{x: 0, y: 0, name: a}, {x: 1, y: 0, name: a}]\n", "points[1].name",
     "duplicate point name 'a' (also points[0])"),
    ("points: [{x: 0, y: 0}, {x: 1, y: 0}, {x: 2, y: 0}]\nplanar_bodies:\n"
     "  - {name: a, points: [0, 1], mass: 1, I0: 1, cog: [0, 0]}\n"
     "  - {name: a, points: [1, 2], mass: 1, I0: 1, cog: [0, 0]}\n", "planar_bodies[1].name",
     "duplicate body name 'a'"),
    (PENDULUM + "actuators: [{name: m, coordinate: x1}, {name: m, coordinate: y1}]\n", "actuators[1].name",
     "duplicate actuator name 'm'"),
])
def test_bad_file_gives_one_line_and_exit_code_2(capsys, write_yaml, text: str, entry: str, problem: str) -> None:
    path = write_yaml(text)
    code, out, err = run_check(capsys, path)
    where = f"{path}: {entry}: " if entry else f"{path}: "
    assert code == 2 and out == ""
    assert err.startswith(f"mbstate check: error: {where}")
    assert problem in err
    assert err.count("\n") == 1


def test_missing_file(capsys, tmp_path) -> None:
    path = tmp_path / "absent.yaml"
    code, _, err = run_check(capsys, path)
    assert code == 2
    assert err == f"mbstate check: error: {path}: cannot read file (No such file or directory)\n"


LOOP_TOO_LONG = """
points:
  - {x: 0, y: 0, fixed: true}
  - {x: 1, y: 0}
  - {x: 1, y: 2}
  - {x: 9, y: 0, fixed: true}
planar_bodies:   # links of 1, 2 and 3 m cannot bridge the 9 m between the pivots
  - {points: [0, 1], mass: 1, I0: 1, cog: [0, 0]}
  - {points: [1, 2], mass: 1, I0: 1, cog: [0, 0]}
  - {points: [2, 3], length: 3, mass: 1, I0: 1, cog: [0, 0]}
"""


def test_mechanism_that_cannot_be_assembled(capsys, write_yaml) -> None:
    path = write_yaml(LOOP_TOO_LONG)
    code, out, err = run_check(capsys, path)
    assert code == 2 and out == ""
    assert err.startswith(f"mbstate check: error: {path}: cannot be assembled: |Φ| = ")
    assert err.count("\n") == 1


def test_console_entry_prints_no_traceback(write_yaml) -> None:
    path = write_yaml(PENDULUM.replace("I0: 1", "I0: 2*x7"))
    result = subprocess.run([sys.executable, "-m", "estimator", "check", str(path)], cwd=REPO,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (f"mbstate check: error: {path}: planar_bodies[0].I0: "
                             "undefined variable 'x7' in '2*x7'\n")


def test_missing_argument_is_a_usage_error(capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["check"])
    assert info.value.code == 2
    assert "mbstate check: error: the following arguments are required: MECH.yaml" in capsys.readouterr().err
