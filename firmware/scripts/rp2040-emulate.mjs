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
//        [--cc2-mv MV] [--log-uart] [--trace usb,i2c0,adc,...] [--trace-pc] [--emulator-log]
//
// The image is the ordinary Pico build (`just firmware-zephyr rpi_pico`, default Kconfig,
// tickless kernel): nothing is built differently for the emulator.
// --bootrom is the RP2040 B1 mask ROM (16 KiB, raw little-endian), built from
// github.com/raspberrypi/pico-bootrom; it is not shipped here. The image calls its
// functions (flash unique ID); execution starts at boot stage 2 at 0x10000000 with LR = 0,
// as rp2040js's own demos start theirs, because the ROM's reset path does not get through
// rp2040js (see below). --skip-boot2 starts at the image's vector table instead.
// Prints `pty <path>` on stdout once the host model has configured the USB device; UART0
// (Zephyr's log) goes to stderr with --log-uart; --seconds stops after S wall-clock seconds;
// --trace lists the register accesses of those peripherals with simulated time; --trace-pc
// prints the core's PC and LR twice a (real) second for addr2line. A watchdog reset ends
// the run (exit 3). Ctrl-C stops.
//
// rp2040js 1.4.1 differs from the chip in ways this firmware meets; each is patched at run
// time below, next to the datasheet section it follows: the SysTick CVR write and its WFI
// wake-up (the tickless kernel live-locked, then slept through its timeouts), the USB
// DEV_CONN_DIS/VBUS_DETECT interrupts and IN-buffer completion timing (an ISR storm, then a
// lost descriptor packet), the I2C interrupt mask and FIFO-level interrupts (no I2C
// transfer ever completed), the ADC FIFO interrupt and self-clearing START_ONCE (an ISR
// storm that overwrote a thread stack; each reading had the previous channel's value); and
// its USB host model gets the status stages and the class request it skipped.
//
// Status (issue #31, by hand): WORKS END TO END. The image boots, the INA228 is found and
// sampled on its ALERT, CC1/CC2 are classified, USB enumerates and `hostd monitor` records
// the stream (docs/firmware.md has the figures). Not modelled: the boot ROM's own reset path
// (it reads the unmodelled VREG_AND_CHIP_RESET.CHIP_RESET as 0xffffffff, sees
// HAD_PSM_RESTART and waits for a debugger in its loop at 0x30), the flash unique ID (the
// probe id reads 0000000000000000), and any relation between simulated and wall time: the
// probe's clock is the emulator's, 1.2-3.5x slower than real time here.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';

// rp2040js from node_modules above this script, or RP2040JS=<path to its dist/esm/index.js>.
const { Simulator, USBCDC, ConsoleLogger, LogLevel } = await import(
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
    trace: { type: 'string' },
    'emulator-log': { type: 'boolean', default: false },
  },
});
if (!opt.firmware || !opt.bootrom) {
  console.error('usage: rp2040-emulate.mjs --firmware zephyr.uf2 --bootrom rp2040-b1.bin [options]');
  process.exit(2);
}

const FLASH_START = 0x10000000;
const SHUNT_OHM = 0.005; // rpi_pico.overlay: shunt-micro-ohms = <5000>
const ALERT_GPIO = 22;
// The board's analog side (rpi_pico.overlay, docs/hardware.md "The board's analog values"):
// ADC_VREF is an LM4040A30 (vref-mv = <3000>), the NTC divider hangs from 3V3
// (pullup-uv = <3300000>) through 10 kOhm (pullup-ohm) to the NTC to ground.
// firmware/tests/test_board.c checks these constants against the overlay and the doc.
const ADC_VREF_MV = 3000;
const NTC_SUPPLY_MV = 3300;
const NTC_PULLUP_OHM = 10000;

const sim = new Simulator();
const mcu = sim.rp2040;
// rp2040js warns on every register it does not model (ROSC, IO_QSPI, SSI, UART0 IFLS/DMACR,
// some USB registers) and logs each USB transfer; --emulator-log shows them.
mcu.logger = new ConsoleLogger(opt['emulator-log'] ? LogLevel.Debug : LogLevel.Error);
const watchdog = mcu.peripherals[0x40058]; // WATCHDOG_BASE >> 14 << 2 (rp2040js keeps no name for it)
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

// ---- rp2040js differences from the chip, patched at run time ----
// SysTick (ARMv6-M ARM B3.3.3/B3.3.4): writing SYST_CVR clears it and COUNTFLAG, and the
// counter reloads from SYST_RVR on the next clock *without* an exception or COUNTFLAG.
// rp2040js sets the counter to 0, which fires its wrap at once: Zephyr's tickless driver
// writes SYST_CVR in every sys_clock_set_timeout(), so each ISR re-armed itself (live-lock).
const ppb = mcu.ppb;
const ppbWrite = ppb.writeUint32.bind(ppb);
ppb.writeUint32 = (offset, value) => {
  if (offset === 0x018) { // SYST_CVR
    ppb.systickCountFlag = false;
    ppb.systickTimer.set(ppb.systickReload);
    return;
  }
  ppbWrite(offset, value);
};
// A pending SysTick exception ends WFI (ARMv6-M ARM B1.5.19) like any interrupt; rp2040js
// wakes the core only for NVIC interrupts, so an idle tickless kernel slept through every
// timeout (until the watchdog fired).
const systickWrap = ppb.systickAlarm.callback;
ppb.systickAlarm.callback = () => {
  systickWrap();
  const { core } = mcu;
  if (core.waiting && core.checkForInterrupts()) core.waiting = false;
};

// USB (RP2040 datasheet 4.1.4, SIE_STATUS and INTR): SIE_STATUS.CONNECTED and
// VBUS_DETECTED are read-only levels; INTR.DEV_CONN_DIS is set when the connection state
// changes and cleared by writing SIE_STATUS.CONNECTED, and INTR.VBUS_DETECT likewise for
// VBUS_DETECTED. rp2040js makes both interrupts the levels themselves and lets a write
// clear CONNECTED: Zephyr's udc_rpi_pico, which enables VBUS_DETECT without handling it,
// then re-entered its ISR forever ("Unhandled IRQ: 0x800") and starved every thread, and
// read back "disconnected" after acknowledging DEV_CONN_DIS.
const usb = mcu.usbCtrl;
const SIE_STATUS = 0x50;
const CONNECTED = 1 << 16;
const VBUS_DETECTED = 1 << 0;
const INTR_DEV_CONN_DIS = 1 << 13;
const INTR_VBUS_DETECT = 1 << 11;
const BUS_RESET = 1 << 19;
const usbLatch = { levels: 0, pending: 0, writing: false };
const usbWrite = usb.writeUint32.bind(usb);
usb.writeUint32 = (offset, value) => {
  if (offset === SIE_STATUS) {
    const levels = usb.sieStatus & (CONNECTED | VBUS_DETECTED);
    const ack = usb.rawWriteValue;
    usbLatch.writing = true;
    usbWrite(offset, value); // clears the write-1-to-clear bits (a bus reset ends: CONNECTED)
    usbLatch.writing = false;
    usb.sieStatus = (usb.sieStatus & ~VBUS_DETECTED) | (levels & VBUS_DETECTED);
    if (!(ack & BUS_RESET)) usb.sieStatus = (usb.sieStatus & ~CONNECTED) | (levels & CONNECTED);
    usbLatch.pending &= ~(((ack & CONNECTED) ? INTR_DEV_CONN_DIS : 0) | ((ack & VBUS_DETECTED) ? INTR_VBUS_DETECT : 0));
    usb.sieStatusUpdated();
    return;
  }
  const enabling = offset === 0x40 && (value & 1) && !(usb.mainCtrl & 1);
  if (enabling) usbLatch.levels = usb.sieStatus & (CONNECTED | VBUS_DETECTED);
  usbWrite(offset, value);
};
const usbStatusUpdated = usb.sieStatusUpdated.bind(usb);
usb.sieStatusUpdated = () => {
  if (usbLatch.writing) return;
  if (!usb.hostMode && (usb.mainCtrl & 1)) {
    const levels = usb.sieStatus & (CONNECTED | VBUS_DETECTED);
    const changed = levels ^ usbLatch.levels;
    usbLatch.levels = levels;
    if (changed & CONNECTED) usbLatch.pending |= INTR_DEV_CONN_DIS;
    if (changed & VBUS_DETECTED) usbLatch.pending |= INTR_VBUS_DETECT;
    const { checkInterrupts } = usb;
    usb.checkInterrupts = () => {}; // recompute the two bits before raising the IRQ
    usbStatusUpdated();
    usb.checkInterrupts = checkInterrupts;
    usb.intRaw = (usb.intRaw & ~(INTR_DEV_CONN_DIS | INTR_VBUS_DETECT)) | usbLatch.pending;
    usb.checkInterrupts();
    return;
  }
  usbStatusUpdated();
};

// I2C (RP2040 datasheet 4.3.17, DW_apb_i2c IC_INTR_MASK and IC_RAW_INTR_STAT): rp2040js
// 1.4.1 ignores writes to IC_INTR_MASK, so no I2C interrupt ever reaches the NVIC, and keeps
// TX_EMPTY and RX_FULL as latched bits. On the chip they are levels: TX_EMPTY while the TX
// FIFO holds no more than IC_TX_TL entries (and the controller is enabled), RX_FULL while the
// RX FIFO holds more than IC_RX_TL. Zephyr's interrupt-driven DesignWare driver unmasks
// TX_EMPTY and waits for it to start each transfer: without this every transfer hung.
const IC_INTR_MASK = 0x30;
const R_RX_FULL = 1 << 2;
const R_TX_EMPTY = 1 << 4;
for (const bus of mcu.i2c) {
  let latched = bus.intRaw;
  Object.defineProperty(bus, 'intRaw', {
    get() {
      const txEmpty = (bus.enable & 1) && bus.txFIFO.itemCount <= bus.txThreshold ? R_TX_EMPTY : 0;
      const rxFull = bus.rxFIFO.itemCount > bus.rxThreshold ? R_RX_FULL : 0;
      return (latched & ~(R_TX_EMPTY | R_RX_FULL)) | txEmpty | rxFull;
    },
    set(v) { latched = v & ~(R_TX_EMPTY | R_RX_FULL); },
  });
  const write = bus.writeUint32.bind(bus);
  bus.writeUint32 = (offset, value) => {
    if (offset === IC_INTR_MASK) bus.intEnable = value & 0x1fff;
    else write(offset, value);
    bus.checkInterrupts();
  };
  const read = bus.readUint32.bind(bus);
  bus.readUint32 = (offset) => {
    const v = read(offset);
    bus.checkInterrupts();
    return v;
  };
  const next = bus.nextCommand.bind(bus);
  bus.nextCommand = () => { next(); bus.checkInterrupts(); };
  const pushRX = bus.pushRX.bind(bus);
  bus.pushRX = (v) => { pushRX(v); bus.checkInterrupts(); };
}

// ADC (RP2040 datasheet 4.9.5/4.9.6, FCS and INTR.FIFO): the FIFO interrupt is a level,
// asserted while the FIFO holds at least FCS.THRESH samples. rp2040js re-evaluates it when a
// sample is pushed but not when one is popped, so after Zephyr's adc_rpi_isr drained the
// FIFO the IRQ stayed asserted: the ISR re-ran with no conversion pending and stored the
// stale RESULT past the end of the caller's buffer (into a thread stack) until the core
// jumped into RAM.
// CS.START_ONCE is self-clearing (same section): rp2040js keeps it set, so the next write
// to CS (Zephyr's adc_select_input, an XOR of the read-back value) started an extra
// conversion of the channel being selected, whose late result then answered the following
// read: each CC and NTC reading came back with the previous channel's value.
const adcWrite = mcu.adc.writeUint32.bind(mcu.adc);
mcu.adc.writeUint32 = (offset, value) => {
  adcWrite(offset, value);
  if (offset === 0x00) mcu.adc.cs &= ~(1 << 2); // CS: START_ONCE
};
const adcRead = mcu.adc.readUint32.bind(mcu.adc);
mcu.adc.readUint32 = (offset) => {
  const v = adcRead(offset);
  if (offset === 0x0c) mcu.adc.checkInterrupts(); // FIFO
  return v;
};

// Watchdog: a real RP2040 resets; rp2040js only calls this hook (and, left alone, re-fires
// it at the same instant forever). A watchdog reset ends the run as a failure.
watchdog.onWatchdogTrigger = () => {
  const reason = watchdog.reason === 1 ? 'timer' : 'forced';
  console.error(`rp2040-emulate: watchdog reset (${reason}) at ${(mcu.clock.nanos / 1e9).toFixed(3)} s ` +
    `(simulated), pc 0x${(mcu.core.PC >>> 0).toString(16)}: stopping`);
  finish(3);
};

// BUFF_STATUS (RP2040 datasheet 4.1.2.5): an IN buffer's bit is set once the host has
// taken the packet. rp2040js sets it when firmware arms the buffer, 10 us before the host
// sees the data, so Zephyr, which re-arms EP0 IN for the next packet of a descriptor from
// the completion handler and then clears the bit it handled, cleared the new packet's
// completion too and the control transfer stalled. The bit is set when the host reads.
const usbIndicate = usb.indicateBufferReady.bind(usb);
const inFlight = new Array(16).fill(0);
usb.indicateBufferReady = (endpoint, out) => {
  if (out) usbIndicate(endpoint, out);
  else inFlight[endpoint]++;
};
usb.endpointWriteAlarms.forEach((a, endpoint) => {
  const deliver = a.alarm.callback;
  a.alarm.callback = () => {
    for (; inFlight[endpoint] > 0; inFlight[endpoint]--) usbIndicate(endpoint, false);
    deliver();
  };
});

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
      } else if (this.pointer === 0x0b) { // DIAG_ALRT: bits 15:12 written, the flags read-only
        this.regs[0x0b] = (v & 0xf000) | (this.regs[0x0b] & 0x0fff);
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

// The breakout's pull-ups on SDA (GP4) and SCL (GP5): the lines read high when nobody drives
// them low, as the firmware's bus recovery expects at start-up (rp2040js's I2C controller
// itself does not look at the pins).
mcu.gpio[4].setInputValue(true);
mcu.gpio[5].setInputValue(true);

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

// ---- ADC: NTC on ADC0, CC1 on ADC1, CC2 on ADC2 ----
// The RP2040's 12-bit code of an input voltage: one LSB is ADC_VREF / 4096 (datasheet 4.9),
// the inverse of Zephyr's adc_raw_to_millivolts (code x vref-mv >> 12); inputs at or above
// ADC_VREF read 4095 (VCONN on a CC pin, a cold NTC).
const code = (mv) => Math.max(0, Math.min(4095, Math.round((mv * 4096) / ADC_VREF_MV)));
// The NTC at 25 degC (10 kOhm, as its pull-up): half of the divider's 3V3 supply, 1650 mV.
const NTC_25C_OHM = 10000;
mcu.adc.channelValues[0] = code((NTC_SUPPLY_MV * NTC_25C_OHM) / (NTC_25C_OHM + NTC_PULLUP_OHM));
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
    serveOut();
  }
});
// The host answers a bulk OUT buffer only when it has bytes for it (a real host sends
// nothing and the device's buffer stays armed). rp2040js's USBCDC answers every armed OUT
// buffer at once, with a zero-length packet when it has nothing, which kept the CDC-ACM
// class re-arming in a loop.
let outArmed = 0;
// A control read ends with the host's zero-length OUT status packet (USB 2.0 8.5.3), sent
// once the device has armed EP0 OUT for it (the host retries on NAK) and before the next
// SETUP. rp2040js's USBCDC skips it, so Zephyr's control pipe never finished a
// GET_DESCRIPTOR ("Sequence 4 not completed"). Here the host model hears of the last (short)
// data packet only after that status stage.
const hostWrite = mcu.usbCtrl.onEndpointWrite;
let ep0OutArmed = false;
let statusFor = null; // the control read's last data packet, awaiting its status stage
const statusAlarm = mcu.clock.createAlarm(() => {
  ep0OutArmed = false;
  mcu.usbCtrl.finishRead(0, new Uint8Array(0));
  const data = statusFor;
  statusFor = null;
  hostWrite(0, data);
});
mcu.usbCtrl.onEndpointWrite = (endpoint, buffer) => {
  if (endpoint === 0 && buffer.length > 0 && buffer.length < 64) {
    statusFor = buffer;
    if (ep0OutArmed) statusAlarm.schedule(10_000);
    return;
  }
  hostWrite(endpoint, buffer);
};
const sendSetup = mcu.usbCtrl.sendSetupPacket.bind(mcu.usbCtrl);
mcu.usbCtrl.sendSetupPacket = (packet) => {
  ep0OutArmed = false; // a buffer armed before this SETUP belongs to an earlier transfer
  sendSetup(packet);
};
mcu.usbCtrl.onEndpointRead = (endpoint, size) => {
  if (endpoint === 0) {
    ep0OutArmed = true;
    if (statusFor) statusAlarm.schedule(10_000);
    return;
  }
  if (endpoint !== cdc.outEndpoint) return;
  outArmed = size;
  serveOut();
};
function serveOut() {
  if (outArmed === 0 || cdc.txFIFO.empty) return;
  const buffer = new Uint8Array(Math.min(outArmed, cdc.txFIFO.itemCount));
  for (let k = 0; k < buffer.length; k++) buffer[k] = cdc.txFIFO.pull();
  outArmed = 0;
  mcu.usbCtrl.endpointReadDone(cdc.outEndpoint, buffer);
}
// SET_CONTROL_LINE_STATE (CDC PSTN 6.3.12) is a class request to the communications
// interface (bmRequestType 0x21, wIndex = interface 0); rp2040js's USBCDC addresses it to the
// device, which Zephyr's stack answers with a STALL. DTR and RTS set, as a terminal does.
cdc.cdcSetControlLineState = (value = 0x03, interfaceNumber = 0) => {
  mcu.usbCtrl.sendSetupPacket(new Uint8Array([0x21, 0x22, value & 0xff, value >> 8,
    interfaceNumber & 0xff, interfaceNumber >> 8, 0, 0]));
  cdc.initialized = true;
};
cdc.onDeviceConnected = () => {
  const announce = () => (ptyPath ? console.log(`pty ${ptyPath}`) : setTimeout(announce, 10));
  announce();
};
cdc.onSerialData = (data) => bridge.stdin.write(Buffer.from(data));

function finish(code) {
  sim.stop();
  bridge.kill();
  console.error(`rp2040-emulate: ${(mcu.clock.nanos / 1e9).toFixed(3)} s simulated in ` +
    `${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.exit(code);
}
const started = Date.now();
console.error(`rp2040-emulate: ${blocks} UF2 blocks from ${opt.firmware}; INA228 at 0x40 ` +
  `(${opt['vbus-v']} V, ${opt['current-a']} A), CC1 ${opt['cc1-mv']} mV, CC2 ${opt['cc2-mv']} mV`);
// --trace usb,i2c0,...: every register access of those peripherals (reads only when they
// change), and for usb the DPRAM buffer-control writes, with simulated time.
const tracePeripherals = { usb: mcu.usbCtrl, i2c0: mcu.i2c[0], i2c1: mcu.i2c[1], adc: mcu.adc,
  uart0: mcu.uart[0], watchdog };
for (const name of (opt.trace ?? '').split(',').filter(Boolean)) {
  const p = tracePeripherals[name];
  if (!p) {
    console.error(`--trace: no peripheral ${name} (${Object.keys(tracePeripherals).join(', ')})`);
    process.exit(2);
  }
  const t = () => (mcu.clock.nanos / 1e6).toFixed(3);
  const hex = (v) => `0x${(v >>> 0).toString(16)}`;
  const kinds = ['', 'xor', 'set', 'clr'];
  const atomic = p.writeUint32Atomic.bind(p);
  p.writeUint32Atomic = (offset, value, type) => {
    console.error(`${t()} ms ${name} w${kinds[type]} ${hex(offset)} ${hex(value)}`);
    atomic(offset, value, type);
  };
  const read = p.readUint32.bind(p);
  let last = '';
  p.readUint32 = (offset) => {
    const v = read(offset);
    const line = `${name} r ${hex(offset)} = ${hex(v)}`;
    if (line !== last) console.error(`${t()} ms ${line}`);
    last = line;
    return v;
  };
  if (name === 'usb') {
    const dpram = p.DPRAMUpdated.bind(p);
    p.DPRAMUpdated = (offset, value) => {
      if (offset >= 0x80 && offset < 0x100) console.error(`${t()} ms dpram ${hex(offset)} ${hex(value)}`);
      dpram(offset, value);
    };
  }
}
if (opt['trace-pc']) {
  setInterval(() => console.error(`pc 0x${(mcu.core.PC >>> 0).toString(16)} lr 0x${(mcu.core.registers[14] >>> 0).toString(16)} t ${(mcu.clock.nanos / 1e9).toFixed(3)} s`), 500);
}
// ---- Start ----
// Boot the way rp2040js's own demos do: boot stage 2 at the start of flash, entered with
// LR = 0 as the boot ROM enters it (it then vectors into the image's table at 0x10000100).
mcu.core.PC = FLASH_START;
mcu.core.LR = 0;
if (opt['skip-boot2']) {
  // Start the application's vector table at 0x10000100 directly (the emulated flash is
  // readable without the XIP set-up boot stage 2 does).
  const vt = 0x100;
  const word = (o) => mcu.flash[o] | (mcu.flash[o + 1] << 8) | (mcu.flash[o + 2] << 16) | (mcu.flash[o + 3] << 24);
  mcu.core.VTOR = FLASH_START + vt;
  mcu.core.SP = word(vt) >>> 0;
  mcu.core.PC = (word(vt + 4) & ~1) >>> 0;
}
sim.execute();
process.on('SIGINT', () => finish(0));
process.on('SIGTERM', () => finish(0));
if (Number(opt.seconds) > 0) setTimeout(() => finish(0), Number(opt.seconds) * 1000);
