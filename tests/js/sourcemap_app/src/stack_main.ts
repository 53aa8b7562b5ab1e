// Prints the stack of run()'s error as an OpenTelemetry SDK records it
// (`exception.stacktrace` is error.stack): tests/processors/test_symbolicate.py sends
// it in an OTLP log record.
import { run } from "./main";

try {
  run();
} catch (error) {
  console.log(JSON.stringify({ stack: (error as Error).stack }));
}
