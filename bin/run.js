#!/usr/bin/env node
// fleet runs from its bundle (dist/bundle/, written by `npm run build`; docs/decisions.md "One bundle"), which holds
// every command and module it needs: no node_modules are read at run time.
import '../dist/bundle/fleet.mjs';
