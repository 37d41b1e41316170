#!/usr/bin/env python3
"""Calls umbra's gRPC API from the command line, knowing nothing of its schema: a small grpcurl.

It needs only grpcio and protobuf (Debian: apt-get install python3-grpcio python3-protobuf; or
pip install grpcio protobuf). The schema comes from the server's reflection service (grpc.reflection.v1),
whose own messages are declared here, since Debian's grpcio ships no reflection client.

  grpc-call.py [-plaintext] HOST:PORT list                       services, then each service's methods
  grpc-call.py [-plaintext] [-H 'name: value']... [-d JSON] [--max N] HOST:PORT SERVICE/METHOD

Answers are printed as JSON, one object per line for a server stream (Ctrl-C or --max N to stop), with
the proto field names. An error status prints `ERROR CODE: details` on stderr and exits 1; -v also
prints the trailing metadata on stderr. Only plaintext connections are made (-plaintext is accepted
for grpcurl's command lines); for TLS pass --tls [--ca FILE].
"""
import argparse
import json
import sys

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

F = descriptor_pb2.FieldDescriptorProto
REFLECTION = "grpc.reflection.v1"


def reflection_file():
    """grpc/reflection/v1/reflection.proto, the messages this client uses."""
    fd = descriptor_pb2.FileDescriptorProto(name="grpc/reflection/v1/reflection.proto", package=REFLECTION, syntax="proto3")
    opt, rep = F.LABEL_OPTIONAL, F.LABEL_REPEATED

    def message(name, *fields, oneof=None):
        m = fd.message_type.add(name=name)
        if oneof:
            m.oneof_decl.add(name=oneof)
        for fname, number, ftype, label, type_name, in_oneof in fields:
            f = m.field.add(name=fname, number=number, type=ftype, label=label)
            if type_name:
                f.type_name = f".{REFLECTION}.{type_name}"
            if in_oneof:
                f.oneof_index = 0

    message(
        "ServerReflectionRequest",
        ("host", 1, F.TYPE_STRING, opt, None, False),
        ("file_by_filename", 3, F.TYPE_STRING, opt, None, True),
        ("file_containing_symbol", 4, F.TYPE_STRING, opt, None, True),
        ("list_services", 7, F.TYPE_STRING, opt, None, True),
        oneof="message_request",
    )
    message("FileDescriptorResponse", ("file_descriptor_proto", 1, F.TYPE_BYTES, rep, None, False))
    message("ServiceResponse", ("name", 1, F.TYPE_STRING, opt, None, False))
    message("ListServiceResponse", ("service", 1, F.TYPE_MESSAGE, rep, "ServiceResponse", False))
    message("ErrorResponse", ("error_code", 1, F.TYPE_INT32, opt, None, False), ("error_message", 2, F.TYPE_STRING, opt, None, False))
    message(
        "ServerReflectionResponse",
        ("valid_host", 1, F.TYPE_STRING, opt, None, False),
        ("file_descriptor_response", 4, F.TYPE_MESSAGE, opt, "FileDescriptorResponse", True),
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
    def __init__(self, channel):
        pool = descriptor_pool.DescriptorPool()
        pool.Add(reflection_file())
        self.Request = message_class(pool, f"{REFLECTION}.ServerReflectionRequest")
        response = message_class(pool, f"{REFLECTION}.ServerReflectionResponse")
        self.call = channel.stream_stream(
            f"/{REFLECTION}.ServerReflection/ServerReflectionInfo",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=response.FromString,
        )

    def ask(self, **request):
        (response,) = list(self.call(iter([self.Request(**request)]), timeout=10))
        if response.WhichOneof("message_response") == "error_response":
            e = response.error_response
            raise LookupError(f"reflection error {e.error_code}: {e.error_message}")
        return response

    def services(self):
        return sorted(s.name for s in self.ask(list_services="*").list_services_response.service)

    def pool_for(self, symbol):
        """A descriptor pool holding the file that defines symbol and everything it imports."""
        files = [descriptor_pb2.FileDescriptorProto.FromString(b) for b in self.ask(file_containing_symbol=symbol).file_descriptor_response.file_descriptor_proto]
        pending = {f.name: f for f in files}
        pool = descriptor_pool.DescriptorPool()
        added = set()
        while pending:
            ready = [f for f in pending.values() if all(d in added or d not in pending for d in f.dependency)]
            if not ready:
                raise LookupError(f"unresolvable imports among {sorted(pending)}")
            for f in ready:
                pool.Add(f)
                added.add(f.name)
                del pending[f.name]
        return pool


def to_json(message):
    try:
        d = json_format.MessageToDict(message, preserving_proto_field_name=True)
    except TypeError:
        d = json_format.MessageToDict(message)
    return json.dumps(d, ensure_ascii=False)


def main():
    p = argparse.ArgumentParser(description="Call a gRPC method through server reflection (a small grpcurl).")
    p.add_argument("-plaintext", "--plaintext", action="store_true", help="plaintext (the default unless --tls)")
    p.add_argument("--tls", action="store_true", help="connect with TLS")
    p.add_argument("--ca", help="PEM file of the CA to trust with --tls (default: the system's)")
    p.add_argument("-H", dest="headers", action="append", default=[], help="metadata 'name: value' (repeatable)")
    p.add_argument("-d", dest="data", default="{}", help="the request as JSON (proto field names)")
    p.add_argument("--max", type=int, default=0, help="stop a server stream after N messages")
    p.add_argument("-v", dest="verbose", action="store_true", help="print the trailing metadata on stderr")
    p.add_argument("target", help="HOST:PORT")
    p.add_argument("method", help="'list', or SERVICE/METHOD (SERVICE.METHOD works too)")
    a = p.parse_args()

    metadata = []
    for h in a.headers:
        name, sep, value = h.partition(":")
        if not sep:
            p.error(f"-H {h!r}: expected 'name: value'")
        metadata.append((name.strip().lower(), value.strip()))

    if a.tls:
        ca = open(a.ca, "rb").read() if a.ca else None
        channel = grpc.secure_channel(a.target, grpc.ssl_channel_credentials(root_certificates=ca))
    else:
        channel = grpc.insecure_channel(a.target)
    with channel:
        reflection = Reflection(channel)
        if a.method == "list":
            for name in reflection.services():
                print(name)
                if name.startswith("grpc.reflection."):
                    continue
                service = reflection.pool_for(name).FindServiceByName(name)
                for m in service.methods:
                    print(f"  {m.name}")
            return 0

        service_name, sep, method_name = a.method.replace("/", ".").rpartition(".")
        if not sep:
            p.error(f"{a.method!r}: expected SERVICE/METHOD")
        service = reflection.pool_for(service_name).FindServiceByName(service_name)
        method = service.methods_by_name.get(method_name)
        if method is None:
            p.error(f"{service_name} has no method {method_name} (it has {', '.join(sorted(service.methods_by_name))})")
        pool = method.input_type.file.pool
        request_class = message_class(pool, method.input_type.full_name)
        response_class = message_class(pool, method.output_type.full_name)
        request = json_format.Parse(a.data, request_class())
        path = f"/{service.full_name}/{method.name}"
        kwargs = {"request_serializer": lambda m: m.SerializeToString(), "response_deserializer": response_class.FromString}
        if method.client_streaming:
            p.error(f"{a.method}: client-streaming methods are not supported")
        try:
            if method.server_streaming:
                call = channel.unary_stream(path, **kwargs)(request, metadata=metadata)
                count = 0
                try:
                    for message in call:
                        print(to_json(message), flush=True)
                        count += 1
                        if a.max and count >= a.max:
                            call.cancel()
                            break
                except KeyboardInterrupt:
                    call.cancel()
                trailers = None if call.cancelled() else call.trailing_metadata()
            else:
                response, call = channel.unary_unary(path, **kwargs).with_call(request, metadata=metadata, timeout=30)
                print(to_json(response))
                trailers = call.trailing_metadata()
        except grpc.RpcError as e:
            print(f"ERROR {e.code().name}: {e.details()}", file=sys.stderr)
            if a.verbose and e.trailing_metadata():
                for k, v in e.trailing_metadata():
                    print(f"{k}: {v}", file=sys.stderr)
            return 1
        if a.verbose and trailers:
            for k, v in trailers:
                print(f"{k}: {v}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
