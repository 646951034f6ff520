import assert from 'node:assert/strict'
import {mkdir, mkdtemp, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, it} from 'node:test'

import {ConfigError} from '../../src/base/errors.js'
import {defaultConfigPaths, loadFleetConfig, parseFleetConfig} from '../../src/config/fleet-config.js'

const env = {HOME: '/home/op'}
const parse = (text: string) => parseFleetConfig(text, '/etc/fleet/fleet.yaml', env, '/work')

function rejects(text: string, message: string) {
  assert.throws(() => parse(text), (error: unknown) => {
    assert.ok(error instanceof ConfigError, String(error))
    assert.equal(error.message, message)
    assert.equal(error.exitCode, 2)
    return true
  })
}

describe('fleet configuration: format', () => {
  it('reads every provider type, with paths relative to the file and ~ as the home directory', () => {
    const config = parse(`
apiVersion: fleet/v1alpha1
kind: FleetConfig
hub: {kubeconfig: hub.yaml, context: hub-admin}
providers:
  - {name: local, type: file, kubeconfig: [~/.kube/config, clusters/]}
  - {name: secrets, type: kubeconfig, namespace: fleet-system, label: example.com/cluster, key: value.yaml}
  - {name: capi, type: cluster-api, apiVersion: v1beta1, hub: {context: capi-mgmt}}
  - {name: inventory, type: cluster-inventory-api, providerFile: access/providers.json}
  - {name: legacy, type: cluster-inventory, consumer: argo, namespace: fleet}
  - {name: tenants, type: namespace, selector: tenant, hub: {kubeconfig: /abs/dev.yaml}}
  - {type: kind, prefix: dev-, command: ./bin/kind}
`)
    assert.equal(config.path, '/etc/fleet/fleet.yaml')
    assert.deepEqual(config.hub, {kubeconfig: ['/etc/fleet/hub.yaml'], context: 'hub-admin'})
    const [local, secrets, capi, inventory, legacy, tenants, kind] = config.providers
    assert.deepEqual(local, {type: 'file', name: 'local', origin: '/etc/fleet/fleet.yaml: providers[0]', kubeconfig: ['/home/op/.kube/config', '/etc/fleet/clusters']})
    assert.deepEqual({...secrets, origin: undefined}, {type: 'kubeconfig', name: 'secrets', origin: undefined, hub: undefined, namespace: 'fleet-system', label: 'example.com/cluster', key: 'value.yaml'})
    assert.deepEqual(capi.type === 'cluster-api' && [capi.apiVersion, capi.hub], ['v1beta1', {kubeconfig: undefined, context: 'capi-mgmt'}])
    assert.deepEqual(inventory.type === 'cluster-inventory' && [inventory.providerFile, inventory.consumer], ['/etc/fleet/access/providers.json', undefined])
    assert.deepEqual(legacy.type === 'cluster-inventory' && [legacy.consumer, legacy.namespace], ['argo', 'fleet'])
    assert.deepEqual(tenants.type === 'namespace' && [tenants.selector, tenants.hub], ['tenant', {kubeconfig: ['/abs/dev.yaml'], context: undefined}])
    // An unnamed entry is named after its type; a command with a path is relative to the file.
    assert.deepEqual(kind.type === 'kind' && [kind.name, kind.prefix, kind.command], ['kind', 'dev-', '/etc/fleet/bin/kind'])
  })

  it('rejects mistakes with one line naming the file and the field', () => {
    const f = '/etc/fleet/fleet.yaml'
    rejects('providers: [\n', `${f}: not valid YAML (line 2): unexpected end of the stream within a flow collection`)
    rejects('- a\n- b\n', `${f}: a fleet configuration must be a mapping`)
    rejects('providers: []\n', `${f}: providers: name at least one provider`)
    rejects('provider:\n  - {type: file}\n', `${f}: provider: unknown field (did you mean "providers"?)`)
    rejects('providers:\n  - {type: kubeconfig, namepsace: x}\n', `${f}: providers[0].namepsace: unknown field (did you mean "namespace"?)`)
    rejects('providers:\n  - {type: file, selector: x}\n', `${f}: providers[0].selector: unknown field (known: name, type, kubeconfig, labels)`)
    rejects('providers:\n  - {type: capi}\n', `${f}: providers[0].type: must be one of file, kubeconfig, cluster-api, cluster-inventory, namespace, kind, kcp; got "capi"`)
    rejects('providers:\n  - {name: a}\n', `${f}: providers[0].type: is required`)
    rejects('providers:\n  - {type: file}\n  - {type: file}\n', `${f}: providers[1].name: duplicate provider name "file" (give each entry its own name)`)
    rejects('providers:\n  - {type: file, name: "a#b"}\n', `${f}: providers[0].name: "a#b" is not a valid provider name (letters, digits, ".", "_" and "-"; it prefixes cluster names as <provider>#<cluster>)`)
    rejects('providers:\n  - {type: kubeconfig, namespace: 3}\n', `${f}: providers[0].namespace: must be a string, got number 3`)
    rejects('providers:\n  - {type: kubeconfig, hub: prod}\n', `${f}: providers[0].hub: must be a mapping, got string "prod"`)
    rejects('hub: {context: a, namespace: b}\nproviders: [{type: file}]\n', `${f}: hub.namespace: unknown field (known: kubeconfig, context)`)
    rejects('providers:\n  - {type: cluster-api, apiVersion: v1}\n', `${f}: providers[0].apiVersion: must be one of v1beta2, v1beta1; got "v1"`)
    rejects('providers:\n  - {type: cluster-inventory}\n', `${f}: providers[0]: set providerFile (access providers) or consumer (Secret strategy)`)
    rejects('providers:\n  - {type: cluster-inventory, providerFile: a.json, consumer: b}\n', `${f}: providers[0].consumer: set providerFile (access providers) or consumer (Secret strategy), not both`)
    rejects('providers:\n  - {type: file, kubeconfig: [a, 3]}\n', `${f}: providers[0].kubeconfig: item 1 must be a non-empty string`)
    rejects('apiVersion: fleet/v2\nproviders: [{type: file}]\n', `${f}: apiVersion: must be fleet/v1alpha1; got "fleet/v2"`)
    rejects('providers:\n  - file\n', `${f}: providers[0]: must be a mapping, got string "file"`)
  })
})

describe('fleet configuration: where it is found', () => {
  it('looks in ./fleet.yaml, then $XDG_CONFIG_HOME/fleet/config.yaml, else ~/.config/fleet/config.yaml', () => {
    assert.deepEqual(defaultConfigPaths({HOME: '/h', XDG_CONFIG_HOME: '/x'}, '/w'), ['/w/fleet.yaml', '/x/fleet/config.yaml'])
    assert.deepEqual(defaultConfigPaths({HOME: '/h'}, '/w'), ['/w/fleet.yaml', '/h/.config/fleet/config.yaml'])
    // The XDG spec says a relative value is invalid and must be ignored.
    assert.deepEqual(defaultConfigPaths({HOME: '/h', XDG_CONFIG_HOME: 'rel'}, '/w'), ['/w/fleet.yaml', '/h/.config/fleet/config.yaml'])
  })

  it('uses the first file that exists, none is fine, and an explicit path must exist', async () => {
    const d = await mkdtemp(join(tmpdir(), 'fleet-config-'))
    const cwd = join(d, 'project')
    const xdg = join(d, 'xdg')
    await mkdir(cwd)
    await mkdir(join(xdg, 'fleet'), {recursive: true})
    const e = {HOME: join(d, 'home'), XDG_CONFIG_HOME: xdg}
    assert.equal(await loadFleetConfig({env: e, cwd}), undefined)

    await writeFile(join(xdg, 'fleet', 'config.yaml'), 'providers: [{name: from-xdg, type: file}]\n')
    assert.equal((await loadFleetConfig({env: e, cwd}))?.providers[0].name, 'from-xdg')

    // ./fleet.yaml is also Rancher Fleet's bundle file: without kind: FleetConfig it is ignored (a note says so).
    await writeFile(join(cwd, 'fleet.yaml'), 'defaultNamespace: team-a\nhelm:\n  chart: ./chart\n')
    const notes: string[] = []
    assert.equal((await loadFleetConfig({env: e, cwd, note: (m) => notes.push(m)}))?.providers[0].name, 'from-xdg')
    assert.deepEqual(notes, [`ignoring ${join(cwd, 'fleet.yaml')}: it does not say "kind: FleetConfig" (a Rancher Fleet bundle file?)`])
    await writeFile(join(cwd, 'fleet.yaml'), 'providers: [{name: from-cwd, type: file}]\n')
    assert.equal((await loadFleetConfig({env: e, cwd}))?.providers[0].name, 'from-xdg')

    await writeFile(join(cwd, 'fleet.yaml'), 'kind: FleetConfig\nproviders: [{name: from-cwd, type: file}]\n')
    const found = await loadFleetConfig({env: e, cwd})
    assert.equal(found?.providers[0].name, 'from-cwd')
    assert.equal(found?.path, join(cwd, 'fleet.yaml'))

    await writeFile(join(d, 'other.yaml'), 'providers: [{name: explicit, type: file}]\n')
    assert.equal((await loadFleetConfig({path: join(d, 'other.yaml'), env: e, cwd}))?.providers[0].name, 'explicit')
    await assert.rejects(loadFleetConfig({path: 'missing.yaml', env: e, cwd}), {message: '--fleet-config: missing.yaml: no such file'})
  })
})
