// The messages, enums and client types of platform.data.source.v1, as the SDK's `sourceV1` namespace.
export * from "../../../gen/platform/data/source/v1/source_pb.js";
export * from "../../../gen/platform/data/source/v1/source_service_client.js";
export * from "../../../gen/platform/data/source/v1/source_service_pb.js";
