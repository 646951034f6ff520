import yaml from 'js-yaml'

import {ConfigError} from './errors.js'

/**
 * YAML text parsed with one error wording for every file fleet reads: `<where>: not valid YAML (line N): <reason>`,
 * where `where` is a path, or a Secret and its key.
 */
export function loadYaml(text: string, where: string, options: {firstDocument?: boolean} = {}): unknown {
  try {
    // firstDocument: a multi-document stream is read up to its first document (client-go's rule for kubeconfig files).
    return options.firstDocument ? yaml.loadAll(text, undefined, {filename: where})[0] : yaml.load(text, {filename: where})
  } catch (error) {
    const e = error instanceof yaml.YAMLException ? error : undefined
    const line = e?.mark ? ` (line ${e.mark.line + 1})` : ''
    throw new ConfigError(`${where}: not valid YAML${line}: ${e ? e.reason : String(error)}`, {cause: error})
  }
}

/**
 * YAML text that may not be YAML at all, where that is an answer rather than an error: the document, or undefined when
 * the text does not parse (a file at an --out path checked for fleet's extension before it is replaced).
 */
export function loadYamlIfValid(text: string): unknown {
  try {
    return yaml.load(text)
  } catch {
    return undefined
  }
}
