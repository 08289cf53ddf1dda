// The messages, enums and client types of platform.data.vector.v1, as the SDK's `vectorV1` namespace.
export * from "../../../gen/platform/data/vector/v1/search_pb.js";
export * from "../../../gen/platform/data/vector/v1/vector_data_service_client.js";
export * from "../../../gen/platform/data/vector/v1/vector_data_service_pb.js";
export * from "../../../gen/platform/data/vector/v1/vector_service_client.js";
export * from "../../../gen/platform/data/vector/v1/vector_service_pb.js";
