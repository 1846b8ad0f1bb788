"""Write the closed-chain examples of configs/mechanisms/urdf/ (issue 38): each a URDF spanning tree
and a sidecar YAML with its loop closures. Run from the repository root:

    python scripts/make_closed_chains.py

- ``rssr``: a spatial RSSR four-bar: a crank on z, a coupler on ball joints, a rocker on a skew axis;
- ``delta``: a Delta robot: three driven upper arms, parallelogram forearms of two rods on ball
  joints at both ends, a translating platform;
- ``five_bar_3d``: configs/mechanisms/five_bar.yaml (geometry, masses, gravity along −y) as a 3D loop
  closed by a revolute closure at C.

URDF has no ball joint: a ball joint of the tree is three revolute joints with intersecting axes
through two massless links (no ``<inertial>``), so it adds no mass; the last axis is the rod's own
(its spin). Its gimbal lock (the middle angle at ±90°: the rod along the first axis) is put where the
mechanism cannot go: on the Delta the first axis of a rod's elbow joint, and the last of the platform's
ball joint in the tree, are along the parallelogram's bar, which a rod of the parallelogram cannot
lie along; on the RSSR the coupler's first axis is vertical at q = 0, and the coupler never is. The ball
joints that close a loop are ball closures of the sidecar. Each tree is written in the pose where
every loop closes at q = 0 (the Delta, the RSSR) or the sidecar's ``initial`` gives the assembly's
start (the five-bar, as its planar file does).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "configs" / "mechanisms" / "urdf"
LIMIT = 'lower="-3.14159" upper="3.14159" effort="100" velocity="100"'


def rpy(rot: np.ndarray) -> tuple[float, float, float]:
    """URDF roll, pitch, yaw of R = Rz(y) Ry(p) Rx(r)."""
    return (float(np.arctan2(rot[2, 1], rot[2, 2])), float(-np.arcsin(np.clip(rot[2, 0], -1, 1))),
            float(np.arctan2(rot[1, 0], rot[0, 0])))


def along(x: np.ndarray, z_hint: np.ndarray = np.array([0.0, 0.0, 1.0])) -> np.ndarray:
    """A rotation whose x axis is ``x`` (its z axis as near ``z_hint`` as can be)."""
    x = x / np.linalg.norm(x)
    y = np.cross(z_hint, x)
    if np.linalg.norm(y) < 1e-9:
        y = np.cross([0.0, 1.0, 0.0], x)
    y /= np.linalg.norm(y)
    return np.column_stack((x, y, np.cross(x, y)))


def numbers(values) -> str:
    return " ".join(f"{float(v) + 0.0:.12g}" for v in values)


class Urdf:
    def __init__(self, name: str, header: str) -> None:
        self.parts = ['<?xml version="1.0"?>', f"<!-- {header} -->", f'<robot name="{name}">', '  <link name="base"/>']

    def link(self, name: str, mass: float = 0.0, com=(0, 0, 0), inertia=(0, 0, 0)) -> None:
        if mass == 0.0:
            self.parts.append(f'  <link name="{name}"/>')
            return
        self.parts += [f'  <link name="{name}">', "    <inertial>", f'      <origin xyz="{numbers(com)}"/>',
                       f'      <mass value="{mass:.12g}"/>',
                       f'      <inertia ixx="{inertia[0]:.12g}" ixy="0" ixz="0" iyy="{inertia[1]:.12g}" iyz="0" '
                       f'izz="{inertia[2]:.12g}"/>', "    </inertial>", "  </link>"]

    def joint(self, name: str, parent: str, child: str, xyz, rot=np.eye(3), axis=(0, 0, 1)) -> None:
        self.parts += [f'  <joint name="{name}" type="revolute">', f'    <parent link="{parent}"/>',
                       f'    <child link="{child}"/>', f'    <origin xyz="{numbers(xyz)}" rpy="{numbers(rpy(rot))}"/>',
                       f'    <axis xyz="{numbers(axis)}"/>', f"    <limit {LIMIT}/>", "  </joint>"]

    def rod(self, name: str, parent: str, xyz, rot, length: float, mass: float, radius: float,
            axis=(0, 0, 1)) -> None:
        """A uniform rod along its x axis from its joint, radius ``radius`` [m]."""
        self.joint(name, parent, name, xyz, rot, axis)
        side = mass * (3 * radius ** 2 + length ** 2) / 12
        self.link(name, mass, (length / 2, 0, 0), (mass * radius ** 2 / 2, side, side))

    def ball_rod(self, name: str, parent: str, xyz, rot, length: float, mass: float, radius: float,
                 axes=((0, 0, 1), (0, 1, 0))) -> None:
        """A rod on a ball joint at ``xyz``: revolute about ``axes`` (in the rod's frame at q = 0), then
        about x (its spin), through massless links ``<name>_g1``, ``<name>_g2``; the gimbal locks when the
        rod lies along the first axis."""
        self.joint(f"{name}_b1", parent, f"{name}_g1", xyz, rot, axes[0])
        self.link(f"{name}_g1")
        self.joint(f"{name}_b2", f"{name}_g1", f"{name}_g2", (0, 0, 0), np.eye(3), axes[1])
        self.link(f"{name}_g2")
        self.rod(name, f"{name}_g2", (0, 0, 0), np.eye(3), length, mass, radius, (1, 0, 0))

    def write(self, path: Path) -> None:
        path.write_text("\n".join(self.parts + ["</robot>", ""]))


def rssr() -> None:
    a, c = 0.06, 0.15  # crank, rocker [m]: the crank turns fully (the coupler reaches the rocker 0.059 m
    # inside its range of distances)
    pivot = np.array([0.22, 0.06, 0.10])  # the rocker's pivot [m]
    axis = np.array([0.2, 0.4, 1.0]) / np.linalg.norm([0.2, 0.4, 1.0])  # its skew axis
    rocker = along(np.cross(axis, [1.0, 0.0, 0.0]), axis)  # x along the rocker, z its axis
    rocker = np.column_stack((rocker[:, 0], np.cross(axis, rocker[:, 0]), axis))
    tip, crank_tip = pivot + c * rocker[:, 0], np.array([a, 0.0, 0.0])
    length = float(np.linalg.norm(tip - crank_tip))
    urdf = Urdf("rssr", "RSSR spatial four-bar, written by scripts/make_closed_chains.py: crank 0.06 m on z, "
                        f"coupler {length:.6g} m on ball joints, rocker 0.15 m on a skew axis; loop closed in the "
                        "sidecar")
    urdf.rod("crank", "base", (0, 0, 0), np.eye(3), a, 0.2, 0.01)
    urdf.ball_rod("coupler", "crank", crank_tip, along(tip - crank_tip), length, 0.3, 0.005)
    urdf.rod("rocker", "base", pivot, rocker, c, 0.25, 0.01)
    urdf.write(OUT / "rssr.urdf")
    (OUT / "rssr.yaml").write_text(
        "# Sidecar of rssr.urdf (scripts/make_closed_chains.py): the coupler's far ball joint closes the loop.\n"
        "actuators:\n  - {joint: crank, name: crank_motor}\n"
        "frames:\n"
        f"  - {{name: coupler_end, link: coupler, xyz: [{length:.12g}, 0, 0]}}\n"
        f"  - {{name: rocker_tip, link: rocker, xyz: [{c}, 0, 0]}}\n"
        "loops:\n  - {name: ball_B, type: ball, frames: [coupler_end, rocker_tip]}\n")


def delta() -> None:
    base, platform, arm, rod, half = 0.2, 0.05, 0.2, 0.45, 0.04  # radii, upper arm, forearm, half width [m]
    down = 0.5  # the upper arms' angle below the horizontal at q = 0 [rad]
    reach = base + arm * np.cos(down) - platform
    height = arm * np.sin(down) + np.sqrt(rod ** 2 - reach ** 2)  # the platform's depth below the base
    slope = np.pi - np.arctan2(height - arm * np.sin(down), reach) - down  # a rod in its arm's frame, about y
    ry = np.array([[np.cos(slope), 0, np.sin(slope)], [0, 1, 0], [-np.sin(slope), 0, np.cos(slope)]])
    urdf = Urdf("delta", "Delta robot, written by scripts/make_closed_chains.py: three driven upper arms, "
                         "parallelogram forearms of two rods on ball joints, a translating platform; loops in the "
                         "sidecar")
    frames, loops = [], []
    for leg, phi in enumerate(np.radians([0.0, 120.0, 240.0])):
        yaw = np.array([[np.cos(phi), -np.sin(phi), 0], [np.sin(phi), np.cos(phi), 0], [0, 0, 1]])
        pitch = np.array([[np.cos(down), 0, np.sin(down)], [0, 1, 0], [-np.sin(down), 0, np.cos(down)]])
        urdf.rod(f"arm{leg}", "base", base * yaw[:, 0], yaw @ pitch, arm, 0.3, 0.015, (0, 1, 0))
        world = yaw @ pitch @ ry  # the rods' pose in the world at q = 0
        for side, sign in (("p", 1.0), ("m", -1.0)):
            name = f"rod{leg}{side}"
            urdf.ball_rod(name, f"arm{leg}", (arm, sign * half, 0.0), ry, rod, 0.05, 0.004, ((0, 1, 0), (0, 0, 1)))
            corner = platform * yaw[:, 0] + sign * half * yaw[:, 1]  # on the platform, about its centre
            if (leg, side) == (0, "p"):
                anchor, to_world = corner, world.T
            else:
                frames.append((f"{name}_end", name, (rod, 0, 0)))
                loops.append((f"ball_{leg}{side}", f"{name}_end", f"platform_{leg}{side}", corner))
    urdf.joint("platform_b1", "rod0p", "platform_g1", (rod, 0, 0), np.eye(3), (1, 0, 0))  # the rod's axis
    urdf.link("platform_g1")
    urdf.joint("platform_b2", "platform_g1", "platform_g2", (0, 0, 0), np.eye(3), (0, 0, 1))
    urdf.link("platform_g2")
    urdf.joint("platform_b3", "platform_g2", "platform", (0, 0, 0), to_world, (0, 1, 0))  # the edge, world y
    mass, radius = 0.2, 0.07
    urdf.link("platform", mass, -anchor, (mass * radius ** 2 / 4, mass * radius ** 2 / 4, mass * radius ** 2 / 2))
    urdf.write(OUT / "delta.urdf")
    lines = ["# Sidecar of delta.urdf (scripts/make_closed_chains.py): rod 0p carries the platform in the tree;",
             "# the other five rods' platform ball joints close the loops.",
             "actuators:"] + [f"  - {{joint: arm{leg}, name: motor{leg}}}" for leg in range(3)] + ["frames:"]
    lines += [f"  - {{name: {name}, link: {link}, xyz: [{numbers(xyz).replace(' ', ', ')}]}}"
              for name, link, xyz in frames]
    lines += [f"  - {{name: {target}, link: platform, xyz: [{numbers(corner - anchor).replace(' ', ', ')}]}}"
              for _, _, target, corner in loops]
    lines += ["loops:"] + [f"  - {{name: {name}, type: ball, frames: [{a}, {b}]}}" for name, a, b, _ in loops]
    (OUT / "delta.yaml").write_text("\n".join(lines) + "\n")


def five_bar() -> None:
    d, a, b, ma, mb = 0.5, 0.3, 0.5, 0.4, 0.6  # configs/mechanisms/five_bar.yaml
    urdf = Urdf("five_bar_3d", "configs/mechanisms/five_bar.yaml as a 3D loop, written by "
                               "scripts/make_closed_chains.py: uniform rods in the xy plane, joints on z; "
                               "the rods' moment about their own axis (1e-9 kg m2) does not enter planar motion")

    def rod(name: str, parent: str, xyz, length: float, mass: float) -> None:
        urdf.joint(name, parent, f"{name}_link", xyz)
        urdf.link(f"{name}_link", mass, (length / 2, 0, 0), (1e-9, mass * length ** 2 / 12, mass * length ** 2 / 12))

    rod("left", "base", (0, 0, 0), a, ma)
    rod("left_elbow", "left_link", (a, 0, 0), b, mb)
    rod("right", "base", (d, 0, 0), a, ma)
    rod("right_elbow", "right_link", (a, 0, 0), b, mb)
    urdf.write(OUT / "five_bar_3d.urdf")
    left, right = np.radians(100.0), np.radians(80.0)
    pb, pd = a * np.array([np.cos(left), np.sin(left)]), np.array([d + a * np.cos(right), a * np.sin(right)])
    pc = np.array([d / 2, pb[1] + np.sqrt(b ** 2 - (d / 2 - pb[0]) ** 2)])
    elbows = [np.arctan2(*(pc - p)[::-1]) - angle for p, angle in ((pb, left), (pd, right))]
    (OUT / "five_bar_3d.yaml").write_text(
        "# Sidecar of five_bar_3d.urdf (scripts/make_closed_chains.py): the two couplers meet at C on a revolute\n"
        "# closure (5 rows, rank 2: Grübler 6*4 - 5*5 = -1, mobility 2). Gravity along -y as in five_bar.yaml.\n"
        "gravity: [0, -9.81, 0]\n"
        "actuators:\n  - {joint: left, name: left_motor}\n  - {joint: right, name: right_motor}\n"
        f"frames:\n  - {{name: left_tip, link: left_elbow_link, xyz: [{b}, 0, 0]}}\n"
        f"  - {{name: right_tip, link: right_elbow_link, xyz: [{b}, 0, 0]}}\n"
        "loops:\n  - {name: C, type: revolute, frames: [left_tip, right_tip]}\n"
        f"initial: {{left: {left:.12g}, right: {right:.12g}, left_elbow: {elbows[0]:.12g}, "
        f"right_elbow: {elbows[1]:.12g}}}\n")


if __name__ == "__main__":
    rssr()
    delta()
    five_bar()
