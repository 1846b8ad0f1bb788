"""User-facing errors: the CLI prints their message on one line and exits with code 2."""


class MbstateError(Exception):
    """A problem with the user's input (files, arguments, configuration), not a bug."""


class MechanismFileError(MbstateError):
    """A mechanism YAML file that cannot be loaded: names the file, the entry and the problem."""

    def __init__(self, path: str, entry: str, problem: str) -> None:
        self.path, self.entry, self.problem = path, entry, problem
        where = f"{path}: {entry}" if entry else path
        super().__init__(f"{where}: {problem}")
