// Beacon: iBeacon, Eddystone, AltBeacon codecs, ranging, regions (issue 7).
