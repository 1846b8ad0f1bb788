"""``mbstate check ROBOT.urdf``: the spatial model's report, and one line with exit code 2 for a bad
URDF."""

import json

from conftest import MECHANISMS

from estimator.cli import main


def test_report_of_the_test_tree(capsys) -> None:
    code = main(["check", str(MECHANISMS / "urdf" / "test_tree.urdf")])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert "joints (degrees of freedom: 6):" in lines
    assert "moving mass: 6.8 kg" in lines
    assert "gravity: (0, 0, -9.81) m/s²" in lines
    assert any(line.split()[1:4] == ["turntable", "continuous", "carriage"] and "limits [-inf, inf]" in line
               for line in lines)


def test_json_report_of_ur5(capsys) -> None:
    code = main(["check", str(MECHANISMS / "urdf" / "ur5.urdf"), "--json"])
    info = json.loads(capsys.readouterr()[0])
    assert code == 0 and info["degrees_of_freedom"] == 6
    assert info["joints"][0]["parent"] == "base_link" and info["joints"][-1]["name"] == "wrist_3_joint"
    assert [a["joint"] for a in info["actuators"]] == [j["name"] for j in info["joints"]]
    assert "tool0" in info["frames"]


def test_bad_urdf_is_one_line_and_exit_2(capsys, tmp_path) -> None:
    path = tmp_path / "bad.urdf"
    path.write_text('<robot name="x"><link name="a"/><link name="b"/><joint name="j" type="ball">'
                    '<parent link="a"/><child link="b"/></joint></robot>')
    code = main(["check", str(path)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "type 'ball': unknown joint type" in err
    code = main(["check", str(path), "--sensors", "x.yaml"])
    assert code == 2
