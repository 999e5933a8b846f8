"""tessel.transform: TVM's ``PassContext`` as far as tensor-expression scripts use it.

tessel runs one lowering pipeline with its optimisations always on (docs/schedule.md), so
``with tvm.transform.PassContext(opt_level=3): tvm.build(...)`` builds as without it. Options that
would change the pipeline (``config``, ``required_pass``, ``disabled_pass``) are a TypeError naming
them, never silently dropped."""


class PassContext:
    """``with PassContext(opt_level=3):`` — accepted; tessel's pipeline is fixed."""

    def __init__(self, opt_level=2, required_pass=None, disabled_pass=None, instruments=None,
                 config=None):
        if not isinstance(opt_level, int) or isinstance(opt_level, bool):
            raise TypeError(f"PassContext(): 'opt_level' is an int, not {type(opt_level)}")
        for name, value in (("required_pass", required_pass), ("disabled_pass", disabled_pass),
                            ("instruments", instruments), ("config", config)):
            if value:
                raise TypeError(f"PassContext(): '{name}' is not supported: tessel's lowering "
                                "pipeline is fixed (docs/schedule.md)")
        self.opt_level = opt_level

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
