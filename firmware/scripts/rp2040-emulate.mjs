#!/usr/bin/env node
// Run the probe's Pico build (rpi_pico zephyr.uf2) on an emulated RP2040
// (rp2040js: the real binary, its I2C, ADC and USB controllers), with an
// INA228 model at 0x40 on I2C0 (ALERT on GP22), CC voltages and the NTC on
// the ADC, and the USB CDC-ACM link bridged to a pseudo-terminal that
// `hostd monitor --probe PTY` can open. By hand, not part of `just test`.
//
//   npm install rp2040js@1.4.1   (once: in the repository root, or anywhere and
//                                  RP2040JS=<dir>/node_modules/rp2040js/dist/esm/index.js)
//   node firmware/scripts/rp2040-emulate.mjs --firmware build/zephyr/rpi_pico/zephyr/zephyr.uf2 \
//        --bootrom rp2040-b1.bin [--seconds S] [--vbus-v V] [--current-a A] [--cc1-mv MV]
//        [--cc2-mv MV] [--log-uart]
//
// --bootrom is the RP2040 B1 mask ROM (16 KiB, raw little-endian), built from
// github.com/raspberrypi/pico-bootrom; it is not shipped here.
// Prints `pty <path>` once the USB device is configured; UART0 (Zephyr's log)
// goes to stderr with --log-uart; --trace-pc prints the core's PC and LR twice a
// (real) second for addr2line. Ctrl-C stops.
//
// Status (issue #31, by hand): NOT YET WORKING END TO END. From the boot ROM the
// image ends in the ROM's wfi loop (0x30); with --skip-boot2 it runs, but with
// the default tickless SysTick it live-locks in the SysTick ISR, and built with
// CONFIG_TICKLESS_KERNEL=n it reaches the application's threads yet writes
// nothing to UART0 and never enumerates USB within 3.6 simulated seconds (about
// 14x slower than real time on a loaded host). See docs/firmware.md.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';

// rp2040js from node_modules above this script, or RP2040JS=<path to its dist/esm/index.js>.
const { Simulator, USBCDC } = await import(
  process.env.RP2040JS ? pathToFileURL(process.env.RP2040JS).href : 'rp2040js'
);

const { values: opt } = parseArgs({
  options: {
    firmware: { type: 'string' },
    bootrom: { type: 'string' },
    seconds: { type: 'string', default: '0' },
    'vbus-v': { type: 'string', default: '5.1' },
    'current-a': { type: 'string', default: '0.8' },
    'cc1-mv': { type: 'string', default: '941' },
    'cc2-mv': { type: 'string', default: '15' },
    'log-uart': { type: 'boolean', default: false },
    'trace-pc': { type: 'boolean', default: false },
    'skip-boot2': { type: 'boolean', default: false },
  },
});
if (!opt.firmware || !opt.bootrom) {
  console.error('usage: rp2040-emulate.mjs --firmware zephyr.uf2 --bootrom rp2040-b1.bin [options]');
  process.exit(2);
}

const FLASH_START = 0x10000000;
const SHUNT_OHM = 0.005; // rpi_pico.overlay: shunt-micro-ohms = <5000>
const ALERT_GPIO = 22;
const ADC_FULL_SCALE_MV = 3300; // rp2040js: 12 bits over ADC_VREF

const sim = new Simulator();
const mcu = sim.rp2040;
const rom = readFileSync(opt.bootrom);
if (rom.length !== 16384) {
  console.error(`${opt.bootrom}: ${rom.length} bytes, the RP2040 boot ROM is 16384`);
  process.exit(2);
}
mcu.loadBootrom(new Uint32Array(rom.buffer, rom.byteOffset, rom.length / 4));

// UF2: 512-byte blocks, magic 0x0A324655 / 0x9E5D5157, address at 12, size at 16, data at 32.
const uf2 = readFileSync(opt.firmware);
let blocks = 0;
for (let off = 0; off + 512 <= uf2.length; off += 512) {
  const b = uf2.subarray(off, off + 512);
  if (b.readUInt32LE(0) !== 0x0a324655 || b.readUInt32LE(4) !== 0x9e5d5157) {
    console.error(`${opt.firmware}: block ${off / 512} is not UF2`);
    process.exit(2);
  }
  const addr = b.readUInt32LE(12);
  const size = b.readUInt32LE(16);
  mcu.flash.set(b.subarray(32, 32 + size), addr - FLASH_START);
  blocks++;
}

// ---- INA228 (TI SLYS021A) at 0x40 on I2C0: the registers the core uses ----
const CT_US = [50, 84, 150, 280, 540, 1052, 2074, 4120];
const AVG = [1, 4, 16, 64, 128, 256, 512, 1024];
const WIDTH = { 0x00: 2, 0x01: 2, 0x02: 2, 0x03: 2, 0x04: 3, 0x05: 3, 0x06: 2, 0x07: 3, 0x08: 3,
  0x09: 5, 0x0a: 5, 0x0b: 2, 0x0c: 2, 0x0d: 2, 0x0e: 2, 0x0f: 2, 0x10: 2, 0x11: 2, 0x3e: 2, 0x3f: 2 };
const ina = {
  regs: { 0x00: 0, 0x01: 0xfb68, 0x02: 0x1000, 0x03: 0, 0x0b: 0x0001, 0x3e: 0x5449, 0x3f: 0x2281 },
  energyJ: 0, chargeC: 0, pointer: 0, writing: [], reading: [], addressed: false, write: false,
  alert: false,
  periodNs() {
    const c = this.regs[0x01];
    const mode = c >> 12;
    if ((mode & 0x7) === 0) return 0; // shutdown
    let us = 0;
    if (mode & 1) us += CT_US[(c >> 9) & 7];
    if (mode & 2) us += CT_US[(c >> 6) & 7];
    if (mode & 4) us += CT_US[(c >> 3) & 7];
    return us * AVG[c & 7] * 1000;
  },
  currentLsb() {
    return this.regs[0x02] / (13107.2e6 * SHUNT_OHM);
  },
  value(reg) {
    const v = Number(opt['vbus-v']);
    const i = Number(opt['current-a']);
    const s20 = (x) => (Math.round(x) & 0xfffff) << 4;
    switch (reg) {
      case 0x04: return s20((i * SHUNT_OHM) / 312.5e-9);
      case 0x05: return s20(v / 195.3125e-6);
      case 0x06: return Math.round(35 / 7.8125e-3) & 0xffff;
      case 0x07: return s20(i / (this.currentLsb() || 1));
      case 0x08: return Math.round((v * i) / (3.2 * (this.currentLsb() || 1))) & 0xffffff;
      case 0x09: return BigInt(Math.round(this.energyJ / (16 * 3.2 * (this.currentLsb() || 1)))) & 0xffffffffffn;
      case 0x0a: return BigInt(Math.round(this.chargeC / (this.currentLsb() || 1))) & 0xffffffffffn;
      default: return this.regs[reg] ?? 0;
    }
  },
  setAlert(low) {
    this.alert = low;
    mcu.gpio[ALERT_GPIO].setInputValue(!low); // active low, pulled up
  },
  converted(dtNs) {
    this.energyJ += Number(opt['vbus-v']) * Number(opt['current-a']) * dtNs * 1e-9;
    this.chargeC += Number(opt['current-a']) * dtNs * 1e-9;
    this.regs[0x0b] |= 0x0002; // CNVRF
    if (this.regs[0x0b] & 0x4000) this.setAlert(true); // CNVR: ALERT on conversion ready
  },
  read(reg) {
    const w = WIDTH[reg] ?? 2;
    let v = BigInt(this.value(reg));
    const out = [];
    for (let k = w - 1; k >= 0; k--) out.push(Number((v >> BigInt(8 * k)) & 0xffn));
    if (reg === 0x0b) { // reading DIAG_ALRT clears the latched flags and releases ALERT
      this.regs[0x0b] &= ~0x0002;
      if (this.alert) this.setAlert(false);
    }
    return out;
  },
  commit() {
    if (this.writing.length === 0) return;
    this.pointer = this.writing[0];
    if (this.writing.length >= 3) {
      const v = (this.writing[1] << 8) | this.writing[2];
      if (this.pointer === 0x00 && (v & 0x8000)) { // RST
        Object.assign(this.regs, { 0x00: 0, 0x01: 0xfb68, 0x02: 0x1000, 0x0b: 0x0001 });
        this.energyJ = 0; this.chargeC = 0;
      } else if (this.pointer === 0x00 && (v & 0x4000)) { // RSTACC
        this.regs[0x00] = v & ~0x4000; this.energyJ = 0; this.chargeC = 0;
      } else {
        this.regs[this.pointer] = v;
      }
      schedule();
    }
    this.writing = [];
  },
};
const conversion = mcu.clock.createAlarm(() => {
  const p = ina.periodNs();
  if (p > 0) {
    ina.converted(p);
    conversion.schedule(p);
  }
});
function schedule() {
  conversion.cancel();
  const p = ina.periodNs();
  if (p > 0) conversion.schedule(p);
}
ina.setAlert(false);
schedule();

const i2c = mcu.i2c[0];
i2c.onStart = () => i2c.completeStart();
i2c.onConnect = (address, mode) => {
  ina.addressed = address === 0x40;
  ina.write = mode === 0; // I2CMode.Write
  if (ina.addressed && !ina.write) ina.reading = ina.read(ina.pointer);
  i2c.completeConnect(ina.addressed);
};
i2c.onWriteByte = (value) => {
  ina.writing.push(value);
  if (ina.writing.length === 1) ina.pointer = value;
  i2c.completeWrite(true);
};
i2c.onReadByte = () => i2c.completeRead(ina.reading.shift() ?? 0xff);
i2c.onStop = () => {
  if (ina.addressed && ina.write) ina.commit();
  ina.writing = [];
  i2c.completeStop();
};

// ---- ADC: NTC on ADC0 (25 degC: half of 3.3 V), CC1 on ADC1, CC2 on ADC2 ----
const code = (mv) => Math.max(0, Math.min(4095, Math.round((mv / ADC_FULL_SCALE_MV) * 4095)));
mcu.adc.channelValues[0] = code(1650);
mcu.adc.channelValues[1] = code(Number(opt['cc1-mv']));
mcu.adc.channelValues[2] = code(Number(opt['cc2-mv']));

// ---- UART0: Zephyr's log ----
let uartLine = '';
mcu.uart[0].onByte = (b) => {
  if (!opt['log-uart']) return;
  uartLine += String.fromCharCode(b);
  if (b === 10) { process.stderr.write(`uart0: ${uartLine}`); uartLine = ''; }
};

// ---- USB CDC-ACM <-> a pseudo-terminal (Python's pty; Node has none) ----
const bridge = spawn('python3', ['-u', '-c', `
import os, sys, tty, select
m, s = os.openpty()
tty.setraw(s)
print("pty", os.ttyname(s), flush=True)
out = sys.stdout.buffer
while True:
    r, _, _ = select.select([m, 0], [], [])
    if m in r:
        data = os.read(m, 4096)
        out.write(len(data).to_bytes(2, "little") + data); out.flush()
    if 0 in r:
        data = os.read(0, 4096)
        if not data: break
        os.write(m, data)
`], { stdio: ['pipe', 'pipe', 'inherit'] });
const cdc = new USBCDC(mcu.usbCtrl);
let ptyPath = null;
let pending = Buffer.alloc(0);
bridge.stdout.on('data', (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  if (ptyPath === null) {
    const nl = pending.indexOf(10);
    if (nl < 0) return;
    ptyPath = pending.subarray(0, nl).toString().split(' ')[1];
    pending = pending.subarray(nl + 1);
  }
  while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16LE(0)) {
    const n = pending.readUInt16LE(0);
    for (const b of pending.subarray(2, 2 + n)) cdc.sendSerialByte(b);
    pending = pending.subarray(2 + n);
  }
});
cdc.onDeviceConnected = () => {
  const announce = () => (ptyPath ? console.log(`pty ${ptyPath}`) : setTimeout(announce, 10));
  announce();
};
cdc.onSerialData = (data) => bridge.stdin.write(Buffer.from(data));

console.error(`rp2040-emulate: ${blocks} UF2 blocks from ${opt.firmware}; INA228 at 0x40 ` +
  `(${opt['vbus-v']} V, ${opt['current-a']} A), CC1 ${opt['cc1-mv']} mV, CC2 ${opt['cc2-mv']} mV`);
if (opt['trace-pc']) {
  setInterval(() => console.error(`pc 0x${(mcu.core.PC >>> 0).toString(16)} lr 0x${(mcu.core.registers[14] >>> 0).toString(16)} t ${(mcu.clock.nanos / 1e9).toFixed(3)} s`), 500);
}
if (opt['skip-boot2']) {
  // Start the application's vector table at 0x10000100 directly, as boot stage 2 would
  // after configuring XIP (the emulated flash is readable without it).
  const vt = 0x100;
  const word = (o) => mcu.flash[o] | (mcu.flash[o + 1] << 8) | (mcu.flash[o + 2] << 16) | (mcu.flash[o + 3] << 24);
  mcu.core.VTOR = FLASH_START + vt;
  mcu.core.SP = word(vt) >>> 0;
  mcu.core.PC = (word(vt + 4) & ~1) >>> 0;
}
sim.execute(); // from the boot ROM's reset vector: it runs boot stage 2 from flash
const stop = () => { sim.stop(); bridge.kill(); process.exit(0); };
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
if (Number(opt.seconds) > 0) setTimeout(stop, Number(opt.seconds) * 1000);
