// The messages, enums and client types of platform.vectordb.v1, as the SDK's `vectordbV1` namespace.
export * from "../../../gen/platform/vectordb/v1/vectordb_pb.js";
export * from "../../../gen/platform/vectordb/v1/vectordb_service_client.js";
export * from "../../../gen/platform/vectordb/v1/vectordb_service_pb.js";
