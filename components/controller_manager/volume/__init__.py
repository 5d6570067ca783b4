"""The controller-manager's volume controllers (``pkg/controller/volume/``): the PV binder with
its simulated provisioner (:mod:`.persistentvolume`, :mod:`.provisioner`), the
pvc-protection and pv-protection controllers (:mod:`.protection`), and the default
StorageClass written at start (:mod:`.defaultclass`)."""
