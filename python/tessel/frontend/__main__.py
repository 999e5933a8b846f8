"""python -m tessel.frontend extract model.onnx -o job.json: the model's fused operator groups as a
tessel-tune job, one DAG task per distinct group (docs/models.md, "Tasks")."""
import argparse
import sys


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m tessel.frontend")
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser("extract", help="write a tessel-tune job of a model's tasks")
    e.add_argument("model", help="an ONNX model file")
    e.add_argument("-o", "--output", required=True, help="the job file to write")
    e.add_argument("--target", default="llvm", help="the job's target (default: llvm)")
    e.add_argument("--trials-per-task", type=int, default=None)
    e.add_argument("--trials", type=int, default=None, help="the budget of the whole job")
    e.add_argument("--per-operator", action="store_true",
                   help="a task per group's first registered operator (its bare workload), "
                        "not per fused group")
    e.add_argument("--layout", default="NCHW",
                   help="the activations' layout: NCHW (the model's) or NCHW<b>c, blocked "
                        "(from_onnx's layout; tune the graph ts.compile will run)")
    e.add_argument("--shape", action="append", default=[], metavar="NAME=D0,D1,...",
                   help="the static shape of an input (for symbolic dimensions); repeatable")
    args = p.parse_args(argv)

    from .. import auto_schedule
    from ._onnx import from_onnx
    from .graph import ModelError
    try:
        shapes = {}
        for s in args.shape:
            name, _, dims = s.rpartition("=")
            shapes[name] = tuple(int(d) for d in dims.split(","))
        graph = from_onnx(args.model, shapes=shapes or None, layout=args.layout)
        tasks = auto_schedule.extract_tasks(graph, job=args.output, target=args.target,
                                            trials=args.trials,
                                            trials_per_task=args.trials_per_task,
                                            fused=not args.per_operator)
    except (ModelError, ValueError, TypeError, RuntimeError) as err:
        print(f"python -m tessel.frontend extract: {err}", file=sys.stderr)
        return 1
    print(f"{args.output}: {len(tasks)} tasks ({sum(t['weight'] for t in tasks)} operator groups)"
          f" of {len(graph.nodes)} groups")
    return 0


if __name__ == "__main__":
    sys.exit(main())
