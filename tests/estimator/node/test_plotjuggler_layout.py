"""The PlotJuggler layout shipped for the four-bar's plot stream (configs/plotjuggler/fourbar_layout.xml): it is
a layout PlotJuggler restores (tabs of containers of dock splitters whose ``count`` and ``sizes`` match their
children, time-series plots) and every curve it names is a series of the node's plot stream for the demo's
four-bar: the topic, a slash, a key the plot map makes of an estimate with σ."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from conftest import REPO

from estimator.model_protocol import actuators
from estimator.node.config import load_node_config
from estimator.node.plot_map import TOPIC, PlotMap

LAYOUT = REPO / "configs" / "plotjuggler" / "fourbar_layout.xml"
CONFIG = REPO / "configs" / "estimator" / "fourbar.yaml"  # the demo's, estimator/data/fourbar_estimator.yaml


def plot_keys() -> set[str]:
    """The keys of the node's plot map for an estimate of the four-bar with σ on every block."""
    mech = load_node_config(CONFIG).mech
    n, forces = mech.n, {name: 1.0 for name, _ in actuators(mech)}
    estimate = {"t": 0.1, "q": [0.0] * n, "qd": [0.0] * n, "qdd": [0.0] * n, "lam": [0.0] * len(mech.constraint_names),
                "forces": forces, "step": 1, "latency_ms": 0.2, "update_steps": 1,
                "sigma": {"q": [0.1] * n, "qd": [0.1] * n, "forces": [0.1] * len(forces)}}
    return set(PlotMap.for_mechanism(mech)(estimate))


def test_the_layout_is_a_plotjuggler_layout_of_time_series_in_dock_splitters():
    root = ET.parse(LAYOUT).getroot()
    assert root.tag == "root" and root.find("previouslyLoaded_Streamer").get("name") == "ZMQ Subscriber"
    tabs = root.findall("tabbed_widget/Tab")
    assert len(tabs) == 1 and int(tabs[0].get("containers")) == len(tabs[0].findall("Container")) == 1
    splitters = list(root.iter("DockSplitter"))
    assert splitters
    for splitter in splitters:
        sizes = [float(size) for size in splitter.get("sizes").split(";")]
        assert splitter.get("orientation") in ("-", "|") and int(splitter.get("count")) == len(splitter) == len(sizes)
        assert sum(sizes) == pytest.approx(1.0) and all(child.tag in ("DockArea", "DockSplitter") for child in splitter)
    plots = root.findall(".//DockArea/plot")
    assert len(plots) == 3 and {plot.get("mode") for plot in plots} == {"TimeSeries"}


def test_every_curve_of_the_layout_is_a_series_of_the_fourbar_plot_stream():
    curves = [curve.get("name") for curve in ET.parse(LAYOUT).getroot().iter("curve")]
    prefix = TOPIC.decode() + "/"
    assert all(name.startswith(prefix) for name in curves)
    assert {name[len(prefix):] for name in curves} <= plot_keys()
    assert {"estimate/q.theta0", "estimate/q.theta0+2sigma", "estimate/q.theta0-2sigma", "estimate/qd.theta0",
            "estimate/Q.theta0"} <= set(curves)  # the crank angle with its band, its rate, the motor's torque
