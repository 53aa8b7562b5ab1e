import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SourceContext(_message.Message):
    __slots__ = ("file", "lineno", "context_line", "pre_context", "post_context")
    FILE_FIELD_NUMBER: _ClassVar[int]
    LINENO_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_LINE_FIELD_NUMBER: _ClassVar[int]
    PRE_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    POST_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    file: str
    lineno: int
    context_line: str
    pre_context: _containers.RepeatedScalarFieldContainer[str]
    post_context: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, file: _Optional[str] = ..., lineno: _Optional[int] = ..., context_line: _Optional[str] = ..., pre_context: _Optional[_Iterable[str]] = ..., post_context: _Optional[_Iterable[str]] = ...) -> None: ...

class ErrorRecord(_message.Message):
    __slots__ = ("exception_class", "message", "backtrace", "fingerprint", "request_id", "user_id", "params", "timestamp", "source_context", "trace_id", "span_id", "environment", "release", "service", "tags", "level", "exceptions", "context", "event_id")
    class TagsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    EXCEPTION_CLASS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    BACKTRACE_FIELD_NUMBER: _ClassVar[int]
    FINGERPRINT_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    SOURCE_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    SPAN_ID_FIELD_NUMBER: _ClassVar[int]
    ENVIRONMENT_FIELD_NUMBER: _ClassVar[int]
    RELEASE_FIELD_NUMBER: _ClassVar[int]
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    EXCEPTIONS_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    exception_class: str
    message: str
    backtrace: _containers.RepeatedScalarFieldContainer[str]
    fingerprint: str
    request_id: str
    user_id: str
    params: _struct_pb2.Struct
    timestamp: _timestamp_pb2.Timestamp
    source_context: SourceContext
    trace_id: str
    span_id: str
    environment: str
    release: str
    service: str
    tags: _containers.ScalarMap[str, str]
    level: str
    exceptions: _struct_pb2.ListValue
    context: _struct_pb2.Struct
    event_id: str
    def __init__(self, exception_class: _Optional[str] = ..., message: _Optional[str] = ..., backtrace: _Optional[_Iterable[str]] = ..., fingerprint: _Optional[str] = ..., request_id: _Optional[str] = ..., user_id: _Optional[str] = ..., params: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., source_context: _Optional[_Union[SourceContext, _Mapping]] = ..., trace_id: _Optional[str] = ..., span_id: _Optional[str] = ..., environment: _Optional[str] = ..., release: _Optional[str] = ..., service: _Optional[str] = ..., tags: _Optional[_Mapping[str, str]] = ..., level: _Optional[str] = ..., exceptions: _Optional[_Union[_struct_pb2.ListValue, _Mapping]] = ..., context: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., event_id: _Optional[str] = ...) -> None: ...

class ErrorBatch(_message.Message):
    __slots__ = ("errors",)
    ERRORS_FIELD_NUMBER: _ClassVar[int]
    errors: _containers.RepeatedCompositeFieldContainer[ErrorRecord]
    def __init__(self, errors: _Optional[_Iterable[_Union[ErrorRecord, _Mapping]]] = ...) -> None: ...

class DeployRecord(_message.Message):
    __slots__ = ("git_sha", "version", "env", "deployer", "description", "timestamp", "service")
    GIT_SHA_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    ENV_FIELD_NUMBER: _ClassVar[int]
    DEPLOYER_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    git_sha: str
    version: str
    env: str
    deployer: str
    description: str
    timestamp: _timestamp_pb2.Timestamp
    service: str
    def __init__(self, git_sha: _Optional[str] = ..., version: _Optional[str] = ..., env: _Optional[str] = ..., deployer: _Optional[str] = ..., description: _Optional[str] = ..., timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., service: _Optional[str] = ...) -> None: ...

class RequestMetric(_message.Message):
    __slots__ = ("method", "route", "path", "status", "duration_ms", "timestamp", "service", "env", "request_id", "trace_id")
    METHOD_FIELD_NUMBER: _ClassVar[int]
    ROUTE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    ENV_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    method: str
    route: str
    path: str
    status: int
    duration_ms: float
    timestamp: _timestamp_pb2.Timestamp
    service: str
    env: str
    request_id: str
    trace_id: str
    def __init__(self, method: _Optional[str] = ..., route: _Optional[str] = ..., path: _Optional[str] = ..., status: _Optional[int] = ..., duration_ms: _Optional[float] = ..., timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., service: _Optional[str] = ..., env: _Optional[str] = ..., request_id: _Optional[str] = ..., trace_id: _Optional[str] = ...) -> None: ...

class RequestBatch(_message.Message):
    __slots__ = ("requests",)
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    requests: _containers.RepeatedCompositeFieldContainer[RequestMetric]
    def __init__(self, requests: _Optional[_Iterable[_Union[RequestMetric, _Mapping]]] = ...) -> None: ...

class Accepted(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class FieldProblem(_message.Message):
    __slots__ = ("field", "error")
    FIELD_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    field: str
    error: str
    def __init__(self, field: _Optional[str] = ..., error: _Optional[str] = ...) -> None: ...

class RejectedItem(_message.Message):
    __slots__ = ("index", "details")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    index: int
    details: _containers.RepeatedCompositeFieldContainer[FieldProblem]
    def __init__(self, index: _Optional[int] = ..., details: _Optional[_Iterable[_Union[FieldProblem, _Mapping]]] = ...) -> None: ...

class BatchResult(_message.Message):
    __slots__ = ("accepted", "rejected", "rejected_items")
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    REJECTED_ITEMS_FIELD_NUMBER: _ClassVar[int]
    accepted: int
    rejected: int
    rejected_items: _containers.RepeatedCompositeFieldContainer[RejectedItem]
    def __init__(self, accepted: _Optional[int] = ..., rejected: _Optional[int] = ..., rejected_items: _Optional[_Iterable[_Union[RejectedItem, _Mapping]]] = ...) -> None: ...
