"""Typed errors at every entry point of the extension (issue 22): a pybind11 conversion failure
("incompatible function arguments", "Unable to cast ...") becomes a TypeError that names the
function, the parameter and what it accepts. The extension's own conversions already raise such
errors; this catches the rest generically, on the error path only (a call that converts pays
nothing but one Python frame, and the hot paths, kernel calls and the stage primitives, take
*args and are not wrapped)."""
import functools
import re

_SIG = re.compile(r"^\s*(?:\d+\.\s*)?(?:[\w.]+)?\((.*)\)\s*->")
_PYBIND_PHRASES = ("incompatible function arguments", "Unable to cast", "incompatible constructor")


def _params(doc):
    """[(name, type text)] of the first signature line of a pybind11 docstring."""
    for line in (doc or "").splitlines():
        m = _SIG.match(line)
        if not m:
            continue
        out, depth, cur = [], 0, ""
        for ch in m.group(1):
            depth += ch in "[(" and 1 or (ch in "])" and -1 or 0)
            if ch == "," and depth == 0:
                out.append(cur)
                cur = ""
            else:
                cur += ch
        if cur.strip():
            out.append(cur)
        params = []
        for p in out:
            p = p.strip()
            if p in ("*", "/") or p.startswith("*"):
                continue
            name, _, rest = p.partition(":")
            params.append((name.strip(), rest.split("=")[0].strip()))
        return params
    return []


def _accepts(type_text, value, ext):
    if "|" in type_text:
        return any(_accepts(t.strip(), value, ext) for t in type_text.split("|"))
    t = type_text.replace("typing.", "").replace("collections.abc.", "")
    if t.startswith("Callable"):
        return callable(value)
    if t == "SupportsIndex":
        return hasattr(value, "__index__") and not isinstance(value, bool)
    simple = {"int": int, "float": (int, float), "str": str, "bool": bool, "bytes": bytes,
              "SupportsInt": int, "SupportsFloat": (int, float)}
    if t in ("object", "", "Any", "args", "kwargs") or t.startswith("Optional"):
        return True
    if t in simple:
        ok = isinstance(value, simple[t])
        return ok and not (t in ("int", "SupportsInt") and isinstance(value, bool))
    if t.startswith(("list[", "List[", "collections.abc.Sequence", "Sequence[")):
        return isinstance(value, (list, tuple))
    if t.startswith("tessel._tessel."):
        cls = getattr(ext, t.rsplit(".", 1)[1], None)
        return cls is None or isinstance(value, cls)
    return True


def _explain(name, fn, args, kwargs, ext, error):
    params = _params(fn.__doc__)
    given = list(zip([p for p in params], args))
    given += [(p, kwargs[p[0]]) for p in params if p[0] in kwargs]
    for (pname, ptype), value in given:
        if pname == "self":
            continue
        if not _accepts(ptype, value, ext):
            accepted = ptype.replace("tessel._tessel.", "tessel.")
            return (f"{name}(): '{pname}' must be {accepted}, not {type(value).__name__}")
    sig = ", ".join(f"{p}: {t.replace('tessel._tessel.', 'tessel.')}" for p, t in params)
    got = ", ".join(type(a).__name__ for a in args)
    return f"{name}(): wrong argument types ({got}); it takes ({sig})"


def _wrap(name, fn, ext):
    @functools.wraps(fn)
    def typed(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (TypeError, RuntimeError) as e:  # pybind11's cast_error is a RuntimeError
            if any(p in str(e) for p in _PYBIND_PHRASES):
                raise TypeError(_explain(name, fn, args, kwargs, ext, e)) from None
            args = kwargs = None  # see below
            raise
        except BaseException:
            # An __init__ that raised leaves `self` (args[0]) unconstructed, and touching it
            # (repr() by a traceback printer that shows locals, as pytest's) crashes the process:
            # the frame this traceback keeps must not hold it.
            args = kwargs = None
            raise
    return typed


def _typed_signature(fn):
    doc = getattr(fn, "__doc__", "") or ""
    first = doc.splitlines()[0] if doc else ""
    return bool(_params(doc)) and ("*args" not in first or "Overloaded function" in doc)


def wrap_extension(ext):
    """Wraps the typed functions of `ext` and the typed methods of its classes in place."""
    for mod in (ext, getattr(ext, "op", None)):
        if mod is None:
            continue
        for name, obj in list(vars(mod).items()):
            if name.startswith("_"):
                continue
            if type(obj).__name__ == "builtin_function_or_method" and _typed_signature(obj):
                setattr(mod, name, _wrap(name, obj, ext))
            elif isinstance(obj, type) and obj.__module__.startswith("tessel"):
                for mname, m in list(vars(obj).items()):
                    if mname.startswith("_") and mname != "__init__":
                        continue
                    if isinstance(m, staticmethod) and _typed_signature(m.__func__):
                        setattr(obj, mname,
                                staticmethod(_wrap(f"{obj.__name__}.{mname}", m.__func__, ext)))
                    elif type(m).__name__ == "instancemethod" and _typed_signature(m):
                        setattr(obj, mname, _wrap(f"{obj.__name__}.{mname}", m, ext))
