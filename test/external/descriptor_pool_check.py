#!/usr/bin/env python3
"""Checks the FileDescriptorProtos a server serves through reflection against an independent descriptor pool.

Every file reflection serves (those of each service, and every file they import, asked for by name) is
added to a fresh google.protobuf DescriptorPool. Then every message field that refers to a type, and every
method's input and output type, must name it the canonical way protoc does: fully qualified, with a
leading dot (`.example.v1.Network`, `.google.protobuf.Timestamp`), and that name must resolve in the pool
to the very type the pool linked the field (or method) to. A pool may resolve relative names on its own,
so the raw names are checked, not only the linked descriptors.

Usage: descriptor_pool_check.py HOST:PORT   -> one JSON object on stdout: files, checked, problems
"""
import json
import sys

import grpc
from google.protobuf import descriptor_pool

from reflection_client import Reflection, load_into


def served_files(reflection):
    """Every file the server serves: the services' own, then each import by name until none is missing."""
    files = {}
    for service in reflection.services():
        for f in reflection.files(file_containing_symbol=service):
            files.setdefault(f.name, f)
    missing = [d for f in files.values() for d in f.dependency if d not in files]
    while missing:
        for f in reflection.files(file_by_filename=missing.pop()):
            files.setdefault(f.name, f)
        missing = [d for f in files.values() for d in f.dependency if d not in files]
    return files


def find_type(pool, full_name):
    for find in (pool.FindMessageTypeByName, pool.FindEnumTypeByName):
        try:
            return find(full_name)
        except KeyError:
            pass
    return None


def check(files):
    pool = descriptor_pool.DescriptorPool()
    problems = []
    try:
        load_into(pool, list(files.values()))
    except Exception as e:  # the pool refusing a file is a finding, not a crash of the check
        return 0, [f"the descriptor pool refused the files: {e}"]
    checked = 0

    def named(where, type_name, linked):
        nonlocal checked
        checked += 1
        if not type_name.startswith("."):
            problems.append(f"{where}: type name {type_name!r} is not fully qualified")
            return
        found = find_type(pool, type_name[1:])
        if found is None:
            problems.append(f"{where}: type name {type_name!r} does not resolve in the pool")
        elif linked is None or found.full_name != linked.full_name:
            problems.append(f"{where}: type name {type_name!r} is not the type the pool linked ({linked and linked.full_name})")

    def message(fd, proto, full_name):
        desc = pool.FindMessageTypeByName(full_name)
        for f in proto.field:
            if f.type_name:
                linked = desc.fields_by_name[f.name]
                named(f"{fd.name}: {full_name}.{f.name}", f.type_name, linked.message_type or linked.enum_type)
        for nested in proto.nested_type:
            message(fd, nested, f"{full_name}.{nested.name}")

    for fd in files.values():
        scope = f"{fd.package}." if fd.package else ""
        for m in fd.message_type:
            message(fd, m, f"{scope}{m.name}")
        for s in fd.service:
            service = pool.FindServiceByName(f"{scope}{s.name}")
            for m in s.method:
                method = service.methods_by_name[m.name]
                named(f"{fd.name}: {service.full_name}.{m.name} input", m.input_type, method.input_type)
                named(f"{fd.name}: {service.full_name}.{m.name} output", m.output_type, method.output_type)
    return checked, problems


def main():
    out = {}
    with grpc.insecure_channel(sys.argv[1]) as channel:
        for package in ("grpc.reflection.v1", "grpc.reflection.v1alpha"):
            files = served_files(Reflection(channel, package))
            checked, problems = check(files)
            out[package] = {"files": sorted(files), "checked": checked, "problems": problems}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
