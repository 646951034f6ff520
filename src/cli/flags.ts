import {Flags} from '@oclif/core'

/** Flags of commands that work over several clusters at once. */
export const fleetFlags = {
  cluster: Flags.string({
    char: 'c',
    description: 'Cluster to work on (repeatable): a full name or an unambiguous short name.',
    multiple: true,
  }),
  all: Flags.boolean({char: 'A', description: 'Work on every cluster the providers list.'}),
  selector: Flags.string({char: 'l', description: 'Only clusters whose labels match this selector (e.g. env=prod,tier!=edge).'}),
  'cluster-timeout': Flags.string({description: 'Time limit for all the work on one cluster (0 for none).', default: '30s'}),
}
