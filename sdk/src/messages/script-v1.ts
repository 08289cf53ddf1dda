// The messages, enums and client types of platform.script.v1, as the SDK's `scriptV1` namespace.
export * from "../../../gen/platform/script/v1/catalog_pb.js";
export * from "../../../gen/platform/script/v1/events_pb.js";
export * from "../../../gen/platform/script/v1/result_stream_pb.js";
export * from "../../../gen/platform/script/v1/script_pb.js";
export * from "../../../gen/platform/script/v1/script_service_client.js";
export * from "../../../gen/platform/script/v1/script_service_pb.js";
export * from "../../../gen/platform/script/v1/thread_pb.js";
