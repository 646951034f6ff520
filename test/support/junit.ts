// Validates JUnit XML against the schemas CI systems read (test/fixtures/junit, sources in its README) with xmllint
// (libxml2 as WebAssembly, the xmllint-wasm package), and reads testcases back for assertions.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { validateXML } from 'xmllint-wasm';

const SCHEMAS = {
  ant: fileURLToPath(new URL('../fixtures/junit/ant-junit.xsd', import.meta.url)),
  jenkins: fileURLToPath(new URL('../fixtures/junit/jenkins-xunit-junit-10.xsd', import.meta.url)),
};

/** The validation errors of `xml` against each schema ([] when valid against all). */
export async function junitSchemaErrors(xml: string): Promise<string[]> {
  const errors: string[] = [];
  for (const [name, path] of Object.entries(SCHEMAS)) {
    const result = await validateXML({
      xml: [{ fileName: 'report.xml', contents: xml }],
      schema: [{ fileName: `${name}.xsd`, contents: readFileSync(path, 'utf8') }],
    });
    if (!result.valid) errors.push(...result.errors.map((e) => `${name}: ${e.rawMessage}`));
  }
  return errors;
}

export interface JUnitCase {
  suite: string;
  name: string;
  outcome: 'passed' | 'failure' | 'skipped';
  message?: string;
}

const attr = (tag: string, name: string) => {
  const m = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  return m
    ? m[1]
        .replace(/&quot;/g, '"')
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&apos;/g, "'")
        .replace(/&amp;/g, '&')
    : undefined;
};

/** Testcases with their outcome. A small reader for fleet's own, schema-validated output, not a general XML parser. */
export function junitCases(xml: string): JUnitCase[] {
  const cases: JUnitCase[] = [];
  for (const suite of xml.matchAll(/<testsuite\s[^>]*>[\s\S]*?<\/testsuite>/g)) {
    const suiteName = attr(suite[0].slice(0, suite[0].indexOf('>') + 1), 'name') ?? '';
    for (const tc of suite[0].matchAll(/<testcase\s[^>]*?(\/>|>([\s\S]*?)<\/testcase>)/g)) {
      const open = tc[0].slice(0, tc[0].indexOf('>') + 1);
      const body = tc[2] ?? '';
      const failure = /<failure\s[^>]*>/.exec(body);
      const skipped = /<skipped[^>]*>/.exec(body);
      cases.push({
        suite: suiteName,
        name: attr(open, 'name') ?? '',
        outcome: failure ? 'failure' : skipped ? 'skipped' : 'passed',
        message: failure ? attr(failure[0], 'message') : skipped ? attr(skipped[0], 'message') : undefined,
      });
    }
  }
  return cases;
}
