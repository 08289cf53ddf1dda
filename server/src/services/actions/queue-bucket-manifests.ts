import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { ActionRunManifestSchema } from "../../../../gen/platform/data/actions/v1/action_run_pb.js";
import type { BucketDirectory } from "../storage/bucket-directory.js";
import type { QueueManifests } from "./queue-ports.js";

/** A manifest is small (inline output up to about 16 KB); anything far larger is not one. */
const MAX_MANIFEST_BYTES = 1024 * 1024;
const LIST_PAGE = 1000;

/** Run manifests read from the storage service's buckets, where the runner writes them. */
export function bucketManifests(storage: Pick<BucketDirectory, "readObject" | "listObjects">): QueueManifests {
  return {
    async read(orgId, bucket, key) {
      const object = await storage.readObject(orgId, bucket, key);
      if (!object) return undefined;
      if (object.size > MAX_MANIFEST_BYTES) {
        await object.blob.close();
        return undefined;
      }
      const parts: Buffer[] = [];
      for await (const part of object.blob.read()) parts.push(part as Buffer);
      const json = JSON.parse(Buffer.concat(parts).toString("utf8")) as JsonValue;
      return fromJson(ActionRunManifestSchema, json, { ignoreUnknownFields: true });
    },

    async *list(orgId, bucket, prefix) {
      let after = "";
      for (;;) {
        const page = await storage.listObjects(orgId, bucket, { prefix, delimiter: "", after, maxKeys: LIST_PAGE });
        for (const object of page.objects) yield object.key;
        if (!page.isTruncated) return;
        after = page.next;
      }
    },
  };
}
