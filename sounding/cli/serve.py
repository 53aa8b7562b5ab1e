"""`sounding serve`: run the collector, announce where it listens and, on first run,
the ingest key and admin token it made."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from model.errors import ConfigError, PortUnavailable
from runtime import eventloop, telemetry
from sounding import config as config_mod
from sounding import exitwatch
from sounding.service import Service, serve
from storage import keys

# The flags of `serve` that move a port, by the setting they override.
PORT_FLAGS = {"receivers.http.port": "--port", "receivers.otlp_grpc.port": "--grpc-port"}


def announce(service: Service) -> None:
    addresses = service.addresses()
    base = addresses[0] if addresses else "http://127.0.0.1:3000"
    for address in addresses:
        print(f"Sounding listening on {address}", flush=True)
    # Announced apart from the receivers: the first "listening on" address is the
    # ingestion API's, and tools (tests/support/server.py) read it so.
    dashboard = service.dashboard_addresses()
    for address in dashboard:
        print(f"Sounding dashboard on {address}", flush=True)
    if service.first_run_key:
        print(
            "\nFirst run: created project 'default' with this ingest key (shown once, "
            "stored only as a hash):\n\n"
            f"    {service.first_run_key}\n\n"
            "Send data with 'Authorization: Bearer <key>' to:\n"
            f"    errors    POST {base}/ingest/errors  and  {base}/ingest/errors/batch\n"
            f"    deploys   POST {base}/ingest/deploys\n"
            f"    requests  POST {base}/ingest/requests\n"
            f"    traces    OTEL_EXPORTER_OTLP_ENDPOINT={base}/ingest\n"
            f"    health    GET  {base}/health\n",
            flush=True,
        )
        if service.first_run_project_id is not None:
            print("Sentry SDKs: set the DSN to\n"
                  f"    {keys.dsn(service.first_run_key, base, service.first_run_project_id)}\n",
                  flush=True)
    if service.first_run_admin_token:
        print(
            "\nFirst run: generated the dashboard admin token (shown once, stored only as "
            "a hash;\nset SOUNDING_ADMIN_TOKEN to choose your own, or run "
            "'sounding admin-token rotate'):\n\n"
            f"    {service.first_run_admin_token}\n\n"
            f"Log in at {(dashboard or [base])[0]}/login, or read the API with "
            "'Authorization: Bearer <admin token>'.\nAdd the first team account with\n\n"
            "    sounding users create --email you@example.com --role admin\n\n"
            "(it asks for the password), or on the dashboard's Users page.\n",
            flush=True,
        )


def override_ports(config: dict[str, Any], args: argparse.Namespace) -> None:
    """--port and --grpc-port, over the file and the environment."""
    for setting, port in (("receivers.http.port", args.port),
                          ("receivers.otlp_grpc.port", args.grpc_port)):
        if port is None:
            continue
        receiver = setting.split(".")[1]
        if receiver not in config["receivers"]:
            raise ConfigError(f"{PORT_FLAGS[setting]}: the configuration has no "
                              f"receivers.{receiver}")
        config["receivers"][receiver]["port"] = port


async def serve_then_watch(config: dict[str, Any]) -> None:
    await serve(config, announce)
    # Stopped: what is left of asyncio.run and of the interpreter's exit is bounded.
    exitwatch.arm()


def cmd_serve(config: dict[str, Any], args: argparse.Namespace) -> int:
    override_ports(config, args)
    name, new_loop = eventloop.loop_factory(config["service"]["event_loop"])
    telemetry.build_info(event_loop=name)
    try:
        with asyncio.Runner(loop_factory=new_loop) as runner:
            runner.run(serve_then_watch(config))
    except PortUnavailable as exc:
        # One line: which port, and what moves it. Nothing was created yet.
        moves = [exc.setting, config_mod.env_var_for(exc.setting)]
        if exc.setting in PORT_FLAGS:
            moves.append(f"serve {PORT_FLAGS[exc.setting]}")
        print(f"sounding: port {exc.port} {exc.why} ({', '.join(moves)})", file=sys.stderr,
              flush=True)
        return 2
    return 0


def port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port (0 to 65535)")
    return value


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    parser = sub.add_parser("serve", parents=[common], help="run the collector")
    parser.add_argument("--port", type=port, metavar="N",
                        help="the ingest HTTP port (receivers.http.port); 0 picks a free one")
    parser.add_argument("--grpc-port", type=port, metavar="N",
                        help="the OTLP gRPC port (receivers.otlp_grpc.port)")
    parser.set_defaults(func=cmd_serve)
