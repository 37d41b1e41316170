#!/usr/bin/env python3
"""An external gRPC client, not written in this project's language, that knows nothing of umbra's schema.

It speaks the server reflection protocol (grpc.reflection.v1 and v1alpha) with Debian's python3-grpcio,
builds every message class from the FileDescriptorProtos the server returns, and then calls methods
dynamically. Debian's grpcio ships no reflection client (grpc_reflection), so the reflection messages
themselves are declared here from descriptor_pb2, as the public reflection.proto defines them.

Usage: reflection_client.py HOST:PORT API_KEY [EXPLAIN_IP]   -> one JSON object on stdout
"""
import json
import sys

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

F = descriptor_pb2.FieldDescriptorProto


def reflection_file(package):
    """grpc/reflection/<v>/reflection.proto, declared by hand (the messages this client uses)."""
    fd = descriptor_pb2.FileDescriptorProto(name=f"{package.replace('.', '/')}/reflection.proto", package=package, syntax="proto3")

    def message(name, *fields, oneof=None):
        m = fd.message_type.add(name=name)
        if oneof:
            m.oneof_decl.add(name=oneof)
        for fname, number, ftype, label, type_name, in_oneof in fields:
            f = m.field.add(name=fname, number=number, type=ftype, label=label)
            if type_name:
                f.type_name = f".{package}.{type_name}"
            if in_oneof:
                f.oneof_index = 0

    opt, rep = F.LABEL_OPTIONAL, F.LABEL_REPEATED
    message("ExtensionRequest", ("containing_type", 1, F.TYPE_STRING, opt, None, False), ("extension_number", 2, F.TYPE_INT32, opt, None, False))
    message(
        "ServerReflectionRequest",
        ("host", 1, F.TYPE_STRING, opt, None, False),
        ("file_by_filename", 3, F.TYPE_STRING, opt, None, True),
        ("file_containing_symbol", 4, F.TYPE_STRING, opt, None, True),
        ("file_containing_extension", 5, F.TYPE_MESSAGE, opt, "ExtensionRequest", True),
        ("all_extension_numbers_of_type", 6, F.TYPE_STRING, opt, None, True),
        ("list_services", 7, F.TYPE_STRING, opt, None, True),
        oneof="message_request",
    )
    message("FileDescriptorResponse", ("file_descriptor_proto", 1, F.TYPE_BYTES, rep, None, False))
    message("ServiceResponse", ("name", 1, F.TYPE_STRING, opt, None, False))
    message("ListServiceResponse", ("service", 1, F.TYPE_MESSAGE, rep, "ServiceResponse", False))
    message("ExtensionNumberResponse", ("base_type_name", 1, F.TYPE_STRING, opt, None, False), ("extension_number", 2, F.TYPE_INT32, rep, None, False))
    message("ErrorResponse", ("error_code", 1, F.TYPE_INT32, opt, None, False), ("error_message", 2, F.TYPE_STRING, opt, None, False))
    message(
        "ServerReflectionResponse",
        ("valid_host", 1, F.TYPE_STRING, opt, None, False),
        ("original_request", 2, F.TYPE_MESSAGE, opt, "ServerReflectionRequest", False),
        ("file_descriptor_response", 4, F.TYPE_MESSAGE, opt, "FileDescriptorResponse", True),
        ("all_extension_numbers_response", 5, F.TYPE_MESSAGE, opt, "ExtensionNumberResponse", True),
        ("list_services_response", 6, F.TYPE_MESSAGE, opt, "ListServiceResponse", True),
        ("error_response", 7, F.TYPE_MESSAGE, opt, "ErrorResponse", True),
        oneof="message_response",
    )
    return fd


def message_class(pool, full_name):
    desc = pool.FindMessageTypeByName(full_name)
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(desc)
    return message_factory.MessageFactory(pool).GetPrototype(desc)


class Reflection:
    def __init__(self, channel, package):
        pool = descriptor_pool.DescriptorPool()
        pool.Add(reflection_file(package))
        self.Request = message_class(pool, f"{package}.ServerReflectionRequest")
        Response = message_class(pool, f"{package}.ServerReflectionResponse")
        self.call = channel.stream_stream(
            f"/{package}.ServerReflection/ServerReflectionInfo",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=Response.FromString,
        )

    def ask(self, **request):
        (response,) = list(self.call(iter([self.Request(**request)]), timeout=10))
        kind = response.WhichOneof("message_response")
        if kind == "error_response":
            raise RuntimeError(f"reflection error {response.error_response.error_code}: {response.error_response.error_message}")
        return response

    def services(self):
        return [s.name for s in self.ask(list_services="*").list_services_response.service]

    def files(self, **request):
        return [descriptor_pb2.FileDescriptorProto.FromString(b) for b in self.ask(**request).file_descriptor_response.file_descriptor_proto]


def load_into(pool, files):
    """Adds files in dependency order (reflection returns a file first, then what it imports)."""
    pending = {f.name: f for f in files}
    added = set()
    while pending:
        ready = [f for f in pending.values() if all(d in added or d not in pending for d in f.dependency)]
        if not ready:
            raise RuntimeError(f"unresolvable imports among {sorted(pending)}")
        for f in ready:
            pool.Add(f)
            added.add(f.name)
            del pending[f.name]


def main():
    target, key = sys.argv[1], sys.argv[2]
    explain_ip = sys.argv[3] if len(sys.argv) > 3 else "8.8.8.8"
    out = {}
    with grpc.insecure_channel(target) as channel:
        for package in ("grpc.reflection.v1", "grpc.reflection.v1alpha"):
            r = Reflection(channel, package)
            out[package] = {
                "services": sorted(r.services()),
                "timestamp_file": [f.name for f in r.files(file_by_filename="google/protobuf/timestamp.proto")],
            }
        r = Reflection(channel, "grpc.reflection.v1")
        service_name = next(s for s in r.services() if s.endswith(".ExampleService"))
        files = r.files(file_containing_symbol=service_name)
        out["files"] = sorted(f.name for f in files)
        pool = descriptor_pool.DescriptorPool()
        load_into(pool, files)
        service = pool.FindServiceByName(service_name)
        out["methods"] = sorted(m.name for m in service.methods)

        def call(method_name, request_json, metadata):
            method = service.methods_by_name[method_name]
            Req = message_class(pool, method.input_type.full_name)
            Resp = message_class(pool, method.output_type.full_name)
            stub = channel.unary_unary(f"/{service.full_name}/{method.name}", request_serializer=lambda m: m.SerializeToString(), response_deserializer=Resp.FromString)
            try:
                response = stub(json_format.ParseDict(request_json, Req()), metadata=metadata, timeout=10)
                return {"json": json_format.MessageToDict(response, preserving_proto_field_name=True, including_default_value_fields=True)}
            except grpc.RpcError as e:
                return {"code": e.code().name, "details": e.details()}

        auth = [("x-api-key", key)]
        out["GetAccountInfo"] = call("GetAccountInfo", {}, auth)
        out["LookupIP"] = call("LookupIP", {"ip_address": "8.8.8.8"}, auth)
        out["LookupIPExplained"] = call("LookupIP", {"ip_address": explain_ip, "explain": True}, auth)
        out["LookupIPs"] = call("LookupIPs", {"ips": ["8.8.8.8", "1.1.1.1", "bogus"]}, auth)
        out["unauthenticated"] = call("GetAccountInfo", {}, [])
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
