"""python -m tessel.distributed: the cluster driver (serve, started by tessel-tune) and a node's
resources for ``ray start --resources`` (docs/distributed.md)."""
import argparse
import json
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tessel.distributed")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="the driver tessel-tune --cluster starts")
    serve.add_argument("--fd", type=int, required=True, help="the daemon's socket")
    serve.add_argument("--address", required=True, help="the Ray head's HOST:PORT, or auto")
    res = sub.add_parser("resources", help="this node's resources for ray start --resources")
    res.add_argument("--target", default=None, help="the target its devices are measured for")
    args = parser.parse_args(argv)
    if args.command == "serve":
        from ._driver import serve as run

        return run(args.fd, args.address)
    from . import node_resources

    print(json.dumps(node_resources(args.target)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
