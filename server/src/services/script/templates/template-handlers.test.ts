import { create } from "@bufbuild/protobuf";
import type { DescMessage, DescMethodUnary, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import { Code, createContextValues, createHandlerContext } from "@connectrpc/connect";
import type { HandlerContext } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { ScriptService } from "../../../../../gen/platform/script/v1/script_service_pb.js";
import { loadTemplateCatalog, SHIPPED_TEMPLATES_DIR } from "./template-catalog.js";
import { createTemplateMethods } from "./template-handlers.js";
import { failure } from "../../../../test/connect-failure.js";

const methods = ScriptService.method;
let service: ReturnType<typeof createTemplateMethods>;
beforeAll(async () => {
  service = createTemplateMethods(await loadTemplateCatalog(SHIPPED_TEMPLATES_DIR));
});

/** A context as the auth interceptor leaves it for a public method: no principal. */
function anonymous(method: DescMethodUnary): HandlerContext {
  return createHandlerContext({
    service: ScriptService,
    method,
    protocolName: "connect",
    requestMethod: "GET",
    url: `http://localhost/${ScriptService.typeName}/${method.name}`,
    contextValues: createContextValues(),
  });
}

type Handler<I extends DescMessage, O extends DescMessage> = (
  request: MessageShape<I>,
  context: HandlerContext,
) => Promise<MessageInitShape<O>> | MessageInitShape<O>;

/** One call as the router makes it: a full request message in, the answer read back as a message. */
async function call<I extends DescMessage, O extends DescMessage>(
  method: DescMethodUnary<I, O>,
  handler: Handler<I, O>,
  init: MessageInitShape<I>,
): Promise<MessageShape<O>> {
  return create(method.output, await handler(create(method.input, init), anonymous(method)));
}

describe("ListTemplates", () => {
  it("answers without a caller, with the filters of the request", async () => {
    const response = await call(methods.listTemplates, service.listTemplates, {
      category: "Embedding",
      labels: [{ key: "type", value: "text" }],
      search: "QUERIES",
    });
    expect(response.templates.map((template) => template.id)).toEqual(["text_embedding_search"]);
    expect(response.totalCount).toBe(1);
    expect(response.nextPageToken).toBe("");
  });

  it("pages with page_size and page_token, reporting the total on each page", async () => {
    const first = await call(methods.listTemplates, service.listTemplates, { pageSize: 2 });
    const all = await call(methods.listTemplates, service.listTemplates, {});
    expect(first.templates.map((template) => template.id)).toEqual(
      all.templates.slice(0, 2).map((template) => template.id),
    );
    expect(first.totalCount).toBe(all.templates.length);
    const second = await call(methods.listTemplates, service.listTemplates, {
      pageSize: 2,
      pageToken: first.nextPageToken,
    });
    expect(second.templates.map((template) => template.id)).toEqual(
      all.templates.slice(2, 4).map((template) => template.id),
    );
  });

  it("matches tags against any of those given", async () => {
    const response = await call(methods.listTemplates, service.listTemplates, {
      tags: ["webhook", "ocr-does-not-exist"],
    });
    expect(response.templates.map((template) => template.id)).toEqual(["classify_and_route", "webhook_fanout"]);
  });

  it("refuses a negative page size", async () => {
    const error = await failure(call(methods.listTemplates, service.listTemplates, { pageSize: -5 }));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toMatch(/^page_size/);
  });
});

describe("GetTemplate", () => {
  it("answers the info and the read-only source without a caller", async () => {
    const response = await call(methods.getTemplate, service.getTemplate, { id: "web_page_extraction" });
    expect(response.info?.id).toBe("web_page_extraction");
    expect(response.info?.category).toBe("extraction");
    expect(response.info?.toolsRequired).toEqual(["artifact.write", "http.request", "json.transform", "llm.complete"]);
    expect(response.info?.contract?.inputs).toMatchObject({ type: "object", required: ["url", "schema"] });
    expect(response.dslContent).toMatch(/^# Fetch a page/);
    expect(response.dslContent).toContain("dsl: script/1");
  });

  it("answers NOT_FOUND naming the id", async () => {
    const error = await failure(call(methods.getTemplate, service.getTemplate, { id: "pdf_to_markdown" }));
    expect(error.code).toBe(Code.NotFound);
    expect(error.rawMessage).toBe('template "pdf_to_markdown" does not exist');
  });
});
