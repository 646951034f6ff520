import {createHash} from 'node:crypto'

import {ConfigError} from '../base/errors.js'
import {EXEC_API_VERSION, EXEC_API_VERSIONS} from '../kubeconfig/types.js'

const WHERE = 'KUBERNETES_EXEC_INFO'

/** What client-go tells the plugin (provideClusterInfo: true): the version to answer in and the cluster it connects to. */
export interface ExecRequest {
  apiVersion: string
  /** The server kubectl is about to send the credential to. */
  server?: string
  /** SHA-256 of its certificate-authority-data, to tell two clusters at one URL apart without keeping the CA. */
  caHash?: string
}

export function readExecRequest(raw: string | undefined): ExecRequest {
  // Run by hand (no KUBERNETES_EXEC_INFO): answer in v1.
  if (raw === undefined || raw.trim() === '') return {apiVersion: EXEC_API_VERSION}
  let value: {apiVersion?: unknown; kind?: unknown; spec?: {cluster?: {server?: unknown; 'certificate-authority-data'?: unknown}}}
  try {
    value = JSON.parse(raw)
  } catch {
    throw new ConfigError(`${WHERE}: not valid JSON`)
  }
  if (!value || typeof value !== 'object' || value.kind !== 'ExecCredential') throw new ConfigError(`${WHERE}: not an ExecCredential`)
  if (typeof value.apiVersion !== 'string' || !EXEC_API_VERSIONS.includes(value.apiVersion)) {
    throw new ConfigError(`${WHERE}: apiVersion "${String(value.apiVersion ?? '')}" is not one fleet answers (${EXEC_API_VERSIONS.join(', ')})`)
  }
  const cluster = value.spec?.cluster
  const ca = cluster?.['certificate-authority-data']
  return {
    apiVersion: value.apiVersion,
    ...(typeof cluster?.server === 'string' && cluster.server !== '' ? {server: cluster.server} : {}),
    ...(typeof ca === 'string' && ca !== '' ? {caHash: createHash('sha256').update(ca).digest('hex')} : {}),
  }
}

/** The ExecCredential on stdout: the credential and, always, when client-go must ask again. */
export function execCredentialJson(apiVersion: string, credential: {token?: string; clientCertificateData?: string; clientKeyData?: string}, expirationTimestamp: string): string {
  const status: Record<string, string> = {}
  if (credential.token) status.token = credential.token
  if (credential.clientCertificateData && credential.clientKeyData) {
    status.clientCertificateData = credential.clientCertificateData
    status.clientKeyData = credential.clientKeyData
  }
  status.expirationTimestamp = expirationTimestamp
  return `${JSON.stringify({apiVersion, kind: 'ExecCredential', status})}\n`
}
