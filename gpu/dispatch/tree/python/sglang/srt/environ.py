import os


class EnvBool:
    def __init__(self, default):
        self.default = default
        self.name = None

    def __set_name__(self, owner, name):
        self.name = name

    def get(self):
        v = os.environ.get(self.name)
        return self.default if v is None else v.lower() in ("1", "true", "yes")


class Envs:
    SGLANG_ENABLE_X = EnvBool(False)


envs = Envs()
