'use strict'
// The FlowFuse platform loads this file as its container driver (driver.type: kubernetes, the
// package installed as @flowfuse/driver-kubernetes): the exported object is the driver.
// createDriver() makes a fresh one (tests).
const { createDriver } = require('./lib/driver')

const driver = createDriver()
Object.defineProperty(driver, 'createDriver', { value: createDriver, enumerable: false })
module.exports = driver
